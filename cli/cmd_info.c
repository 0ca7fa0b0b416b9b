/* aurorapack info: what a .aurp holds, chunk by chunk (text or --json). */
#include <stdlib.h>

#include "cli.h"

static const char *method_name(int m)
{
    return m == AURP_CHUNK_IMAGE ? "image" : m == AURP_CHUNK_GENERAL ? "general" : "stored";
}

static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

static int has_image(const aurp_info *in)
{
    for (int i = 0; i < in->nchunks; i++)
        if (in->chunks[i].method == AURP_CHUNK_IMAGE) return 1;
    return 0;
}

static void print_text(const char *path, size_t plen, const aurp_info *in)
{
    printf("%s: format %d, %llu -> %zu bytes (%.2fx), XXH3-64 %016llx, %d chunk%s\n", path,
           in->version, (unsigned long long)in->original_size, plen,
           plen ? (double)in->original_size / plen : 0.0, (unsigned long long)in->checksum,
           in->nchunks, in->nchunks == 1 ? "" : "s");
    if (!has_image(in)) printf("  general-purpose coding (no 16-bit 2-D image)\n");
    int img = 0;
    for (int i = 0; i < in->nchunks; i++) {
        const aurp_chunk_info *c = &in->chunks[i];
        if (c->method != AURP_CHUNK_IMAGE) {
            printf("  chunk %d: %s, %llu -> %llu bytes\n", i, method_name(c->method),
                   (unsigned long long)c->raw_len, (unsigned long long)c->enc_len);
            continue;
        }
        uint64_t px = (uint64_t)c->width * c->height;
        printf("  chunk %d: image %d, %u x %u (W x H), profile %s, N=%d M=%d T=%d, ", i, img++,
               c->width, c->height, aurp_profile_name(c->profile), c->order, c->equations,
               c->threshold);
        if (c->t_lo > c->t_hi) printf("coded range empty");
        else printf("T-=%d T+=%d", c->t_lo, c->t_hi);
        printf(", escapes %llu, %llu -> %llu bytes, %.3f bpp\n", (unsigned long long)c->escapes,
               (unsigned long long)c->raw_len, (unsigned long long)c->enc_len,
               px ? 8.0 * c->enc_len / px : 0.0);
    }
}

static void print_json(const char *path, size_t plen, const aurp_info *in, int first)
{
    printf("%s{\"file\":", first ? "" : ",\n");
    json_string(path);
    printf(",\"format\":%d,\"original_size\":%llu,\"packed_size\":%zu,\"checksum\":\"%016llx\","
           "\"coding\":\"%s\",\"chunks\":[",
           in->version, (unsigned long long)in->original_size, plen,
           (unsigned long long)in->checksum, has_image(in) ? "image" : "general");
    for (int i = 0; i < in->nchunks; i++) {
        const aurp_chunk_info *c = &in->chunks[i];
        printf("%s{\"method\":\"%s\",\"raw_len\":%llu,\"enc_len\":%llu", i ? "," : "",
               method_name(c->method), (unsigned long long)c->raw_len,
               (unsigned long long)c->enc_len);
        if (c->method == AURP_CHUNK_IMAGE) {
            uint64_t px = (uint64_t)c->width * c->height;
            printf(",\"width\":%u,\"height\":%u,\"profile\":\"%s\",\"N\":%d,\"M\":%d,\"T\":%d,"
                   "\"t_lo\":%d,\"t_hi\":%d,\"escapes\":%llu,\"bpp\":%.4f",
                   c->width, c->height, aurp_profile_name(c->profile), c->order, c->equations,
                   c->threshold, c->t_lo, c->t_hi, (unsigned long long)c->escapes,
                   px ? 8.0 * c->enc_len / px : 0.0);
        }
        printf("}");
    }
    printf("]}");
}

int cmd_info(int argc, char **argv)
{
    cli_options o;
    if (cli_parse("info", argc, argv, "j", &o)) return EXIT_USAGE;
    int failed = 0, printed = 0;
    if (o.json) printf("[");
    for (int i = 0; i < o.nfiles; i++) {
        const char *path = o.files[i];
        char err[1024];
        uint8_t *packed;
        size_t plen;
        if (cli_read_file(path, &packed, &plen, err, sizeof err)) {
            fprintf(stderr, "aurorapack info: %s\n", err);
            failed++;
            continue;
        }
        aurp_info info;
        aurp_error ae = {{0}};
        aurp_status st = aurp_inspect(packed, plen, &info, &ae);
        free(packed);
        if (st != AURP_OK) {
            fprintf(stderr, "aurorapack info: %s: not a readable .aurp stream: %s: %s\n", path,
                    aurp_status_name(st), ae.msg);
            failed++;
            continue;
        }
        if (o.json) print_json(path, plen, &info, printed == 0);
        else print_text(path, plen, &info);
        printed++;
        aurp_info_free(&info);
    }
    if (o.json) printf("]\n");
    return failed ? EXIT_FILE_ERROR : 0;
}

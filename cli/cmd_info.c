/* aurorapack info: what a .aurp holds, chunk by chunk (text or --json). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *method_name(int m)
{
    return m == AURP_CHUNK_IMAGE ? "image" : m == AURP_CHUNK_GENERAL ? "general" : m == AURP_CHUNK_TEXT ? "text" : "stored";
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
        printf("  chunk %d: image %d, %u x %u (W x H), profile %s, ", i, img++, c->width, c->height,
               aurp_profile_name(c->profile));
        if (c->profile == AURP_PROFILE_PAPER) {
            printf("N=%d M=%d T=%d, ", c->order, c->equations, c->threshold);
            if (c->t_lo > c->t_hi) printf("coded range empty");
            else printf("T-=%d T+=%d", c->t_lo, c->t_hi);
            printf(", escapes %llu, ", (unsigned long long)c->escapes);
        } else {
            printf("K=%d M=%d, ", c->order, c->equations); /* lags and window: no escapes */
        }
        printf("%llu -> %llu bytes, %.3f bpp\n", (unsigned long long)c->raw_len,
               (unsigned long long)c->enc_len, px ? 8.0 * c->enc_len / px : 0.0);
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

/* A stream that cannot be read whole: what it still says, and why not. */
static void print_damaged_text(const char *path, size_t plen, const aurp_info *in,
                               const aurp_damage *d, const char *why)
{
    printf("%s: DAMAGED: %s\n", path, why);
    if (!d->header_ok) return;
    printf("  header: format %d, %llu bytes of original declared, XXH3-64 %016llx, %u chunk%s "
           "declared, %zu bytes present\n",
           in->version, (unsigned long long)in->original_size, (unsigned long long)in->checksum,
           d->declared_chunks, d->declared_chunks == 1 ? "" : "s", plen);
    if (d->truncated)
        printf("  truncated: at least %llu bytes missing\n", (unsigned long long)d->missing);
    else if (!d->checksum_ok)
        printf("  the stream checksum does not match: bytes were changed\n");
    printf("  readable: %d chunk%s restoring %llu of %llu bytes\n", in->nchunks,
           in->nchunks == 1 ? "" : "s", (unsigned long long)d->readable_raw,
           (unsigned long long)in->original_size);
    for (int i = 0; i < in->nchunks; i++) {
        const aurp_chunk_info *c = &in->chunks[i];
        printf("  chunk %d: %s, %llu -> %llu bytes", i, method_name(c->method),
               (unsigned long long)c->raw_len, (unsigned long long)c->enc_len);
        if (c->method == AURP_CHUNK_IMAGE) printf(", image %u x %u (W x H)", c->width, c->height);
        putchar('\n');
    }
}

static void print_damaged_json(const char *path, size_t plen, const aurp_info *in,
                               const aurp_damage *d, const char *why, int first)
{
    printf("%s{\"file\":", first ? "" : ",\n");
    json_string(path);
    printf(",\"damaged\":");
    json_string(why);
    printf(",\"truncated\":%s,\"header_ok\":%s,\"checksum_ok\":%s,\"packed_size\":%zu",
           d->truncated ? "true" : "false", d->header_ok ? "true" : "false",
           d->checksum_ok ? "true" : "false", plen);
    if (d->truncated) printf(",\"missing_bytes\":%llu", (unsigned long long)d->missing);
    if (d->header_ok) {
        printf(",\"format\":%d,\"original_size\":%llu,\"checksum\":\"%016llx\","
               "\"declared_chunks\":%u,\"readable_bytes\":%llu,\"chunks\":[",
               in->version, (unsigned long long)in->original_size, (unsigned long long)in->checksum,
               d->declared_chunks, (unsigned long long)d->readable_raw);
        for (int i = 0; i < in->nchunks; i++) {
            const aurp_chunk_info *c = &in->chunks[i];
            printf("%s{\"method\":\"%s\",\"raw_len\":%llu,\"enc_len\":%llu", i ? "," : "",
                   method_name(c->method), (unsigned long long)c->raw_len,
                   (unsigned long long)c->enc_len);
            if (c->method == AURP_CHUNK_IMAGE) printf(",\"width\":%u,\"height\":%u", c->width, c->height);
            printf("}");
        }
        printf("]");
    }
    printf("}");
}

int cmd_info(int argc, char **argv)
{
    cli_options o;
    if (cli_parse("info", argc, argv, "jF", &o)) return EXIT_USAGE;
    cli_inputs files;
    if (cli_collect_inputs("info", &o, AURP_EXTENSION, &files) != 0) return EXIT_FILE_ERROR;
    int failed = 0, printed = 0;
    if (o.json) printf("[");
    for (size_t i = 0; i < files.n; i++) {
        const char *path = files.items[i].path;
        char err[1024];
        uint8_t *packed;
        size_t plen;
        int rd = cli_read_input(path, &packed, &plen, err, sizeof err);
        if (rd) {
            fprintf(stderr, "aurorapack info: %s\n", err);
            failed++;
            continue;
        }
        aurp_info info;
        aurp_damage damage;
        aurp_error ae = {{0}};
        aurp_status st = aurp_inspect_partial(packed, plen, &info, &damage, &ae);
        free(packed);
        if (st != AURP_OK && !damage.header_ok && !damage.truncated) {
            fprintf(stderr, "aurorapack info: %s: not a readable .aurp stream: %s: %s\n", path,
                    aurp_status_name(st), ae.msg);
            failed++;
        } else if (st != AURP_OK) {
            /* what can still be said goes to stdout, as for a good file */
            if (o.json) print_damaged_json(path, plen, &info, &damage, ae.msg, printed == 0);
            else print_damaged_text(path, plen, &info, &damage, ae.msg);
            fprintf(stderr, "aurorapack info: %s: %s\n", path, ae.msg);
            printed++;
            failed++;
        } else {
            if (o.json) print_json(path, plen, &info, printed == 0);
            else print_text(path, plen, &info);
            printed++;
        }
        aurp_info_free(&info);
    }
    if (o.json) printf("]\n");
    cli_inputs_free(&files);
    return failed ? EXIT_FILE_ERROR : 0;
}

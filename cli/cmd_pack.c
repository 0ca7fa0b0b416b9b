/* aurorapack pack: FILE -> FILE.aurp (or -o OUT), atomically. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "frame.h"

static uint64_t image_pixels(const frame_layout *l)
{
    uint64_t n = 0;
    for (int i = 0; i < l->nregions; i++) n += (uint64_t)l->regions[i].width * l->regions[i].height;
    return n;
}

static int pack_one(const char *path, const cli_options *o, cli_encoder *enc)
{
    char err[1024] = "", out_buf[4096];
    const char *out = o->out;
    if (!out) {
        snprintf(out_buf, sizeof out_buf, "%s%s", path, AURP_EXTENSION);
        out = out_buf;
    }
    if (!o->force && cli_exists(out)) {
        fprintf(stderr, "aurorapack pack: %s: %s already exists (use -f to overwrite)\n", path, out);
        return -1;
    }
    uint8_t *data;
    size_t len;
    if (cli_read_file(path, &data, &len, err, sizeof err)) {
        fprintf(stderr, "aurorapack pack: %s\n", err);
        return -1;
    }
    frame_layout layout;
    frame_layout_of(data, len, &layout);
    if (layout.kind == FRAME_NOT_FITS && !o->any) {
        fprintf(stderr, "aurorapack pack: %s: not a FITS file: %s (--any packs any file with the general-purpose coder)\n",
                path, layout.why);
        free(data);
        return -1;
    }
    const aurp_image_encoder *ie = NULL;
    uint32_t max_w = 0, max_h = 0;
    for (int i = 0; i < layout.nregions; i++) {
        if (layout.regions[i].width > max_w) max_w = layout.regions[i].width;
        if (layout.regions[i].height > max_h) max_h = layout.regions[i].height;
    }
    if (layout.kind == FRAME_FITS_IMAGE) {
        ie = cli_encoder_for(enc, max_w, max_h, err, sizeof err);
        if (!ie && err[0]) {
            if (!cli_encoder_falls_back(enc)) {
                fprintf(stderr, "aurorapack pack: %s: %s\n", path, err);
                free(data);
                return -1;
            }
            fprintf(stderr, "aurorapack pack: %s: %s; packing on the CPU\n", path, err);
        }
    }
    err[0] = '\0';
    aurp_error ae = {{0}};
    uint8_t *packed = NULL;
    size_t plen = 0;
    double t0 = cli_now_ms();
    aurp_status st = frame_pack(data, len, &layout, &o->params, ie, o->threads, &packed, &plen, &ae);
    const char *label = ie ? cli_encoder_label(enc, o->threads) : NULL;
    if (st == AURP_ERR_BACKEND && ie && cli_encoder_falls_back(enc)) {
        fprintf(stderr, "aurorapack pack: %s: GPU encoder failed (%s); packing on the CPU\n", path,
                ae.msg);
        ie = NULL;
        st = frame_pack(data, len, &layout, &o->params, NULL, o->threads, &packed, &plen, &ae);
    }
    double ms = cli_now_ms() - t0;
    if (st != AURP_OK) {
        fprintf(stderr, "aurorapack pack: %s: cannot pack: %s: %s\n", path, aurp_status_name(st),
                ae.msg);
        free(data);
        return -1;
    }
    if (cli_write_atomic(out, packed, plen, o->force, err, sizeof err)) {
        fprintf(stderr, "aurorapack pack: %s: %s\n", path, err);
        free(data);
        free(packed);
        return -1;
    }
    if (!o->quiet) {
        char buf[512];
        char cpu_label[64];
        snprintf(cpu_label, sizeof cpu_label, "cpu, %d thread%s", o->threads,
                 o->threads == 1 ? "" : "s");
        if (!ie || !label) label = cpu_label;
        uint64_t px = image_pixels(&layout);
        if (layout.kind == FRAME_FITS_IMAGE)
            snprintf(buf, sizeof buf, "%.3f bpp over %llu pixels in %d image%s, %s", 8.0 * plen / px,
                     (unsigned long long)px, layout.nregions, layout.nregions == 1 ? "" : "s", label);
        else if (layout.kind == FRAME_FITS_OTHER)
            snprintf(buf, sizeof buf, "general-purpose coding (no 16-bit 2-D image: %s)", layout.why);
        else
            snprintf(buf, sizeof buf, "general-purpose coding (--any; not FITS: %s)", layout.why);
        printf("%s -> %s: %zu -> %zu bytes (%.2fx, %.0f ms): %s\n", path, out, len, plen,
               plen ? (double)len / plen : 0.0, ms, buf);
    }
    free(data);
    free(packed);
    return 0;
}

int cmd_pack(int argc, char **argv)
{
    cli_options o;
    if (cli_parse("pack", argc, argv, "ptgfoaq", &o)) return EXIT_USAGE;
    cli_encoder *enc = cli_encoder_open(&o);
    if (!enc) return EXIT_FILE_ERROR;
    int failed = 0;
    for (int i = 0; i < o.nfiles; i++) failed += pack_one(o.files[i], &o, enc) != 0;
    cli_encoder_close(enc);
    return failed ? EXIT_FILE_ERROR : 0;
}

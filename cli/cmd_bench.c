/* aurorapack bench: this codec next to well-kept lossless coders, one table
 * per file.  bpp = 8 * compressed bytes / image pixels. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "cli.h"
#include "frame.h"

/* This codec on the whole file: median encode and decode times. */
static void bench_self(const uint8_t *data, size_t len, const frame_layout *layout,
                       const cli_options *o, const aurp_image_encoder *ie, const char *label,
                       bench_result *r, char *name_buf, size_t name_len)
{
    memset(r, 0, sizeof *r);
    snprintf(name_buf, name_len, "aurorapack %s N%d M%d T%d (%s)", aurp_profile_name(o->params.profile),
             o->params.order, o->params.equations, o->params.threshold, label);
    r->name = name_buf;
    r->available = 1;
    double *te = malloc(sizeof(double) * (size_t)o->repeat), *td = malloc(sizeof(double) * (size_t)o->repeat);
    uint8_t *packed = NULL, *restored = NULL;
    size_t plen = 0, rlen = 0;
    static char note[300];
    aurp_error ae = {{0}};
    if (!te || !td) {
        r->note = "out of memory";
        goto done;
    }
    for (int i = 0; i < o->repeat; i++) {
        free(packed);
        packed = NULL;
        double t0 = cli_now_ms();
        aurp_status st = frame_pack(data, len, layout, &o->params, ie, o->threads, &packed, &plen, &ae);
        te[i] = cli_now_ms() - t0;
        if (st != AURP_OK) {
            snprintf(note, sizeof note, "pack failed: %s: %s", aurp_status_name(st), ae.msg);
            r->note = note;
            goto done;
        }
    }
    for (int i = 0; i < o->repeat; i++) {
        free(restored);
        restored = NULL;
        double t0 = cli_now_ms();
        aurp_status st = frame_unpack(packed, plen, o->threads, &restored, &rlen, &ae);
        td[i] = cli_now_ms() - t0;
        if (st != AURP_OK) {
            snprintf(note, sizeof note, "unpack failed: %s: %s", aurp_status_name(st), ae.msg);
            r->note = note;
            goto done;
        }
    }
    r->bytes = plen;
    r->enc_ms = bench_median(te, o->repeat);
    r->dec_ms = bench_median(td, o->repeat);
    r->ok = rlen == len && memcmp(restored, data, len) == 0;
    snprintf(note, sizeof note, "%s", r->ok ? "whole file, decoded on the CPU" : "restored file DIFFERS");
    r->note = note;
done:
    free(te), free(td), free(packed), free(restored);
}

static void print_row(const bench_result *r, uint64_t pixels, double ref_bpp)
{
    if (!r->available || !r->ok) {
        printf("  %-44s %10s %7s %8s %10s %10s  %s\n", r->name, "-", "-", "-", "-", "-",
               r->note ? r->note : "failed");
        return;
    }
    double bpp = 8.0 * (double)r->bytes / (double)pixels;
    char ratio[32] = "-";
    if (ref_bpp > 0) snprintf(ratio, sizeof ratio, "%.3f", bpp / ref_bpp);
    printf("  %-44s %10llu %7.3f %8s %10.1f %10.1f  %s%s\n", r->name,
           (unsigned long long)r->bytes, bpp, ratio, r->enc_ms, r->dec_ms, r->note,
           r->external ? " *" : "");
}

static int bench_one(const char *path, const cli_options *o, cli_encoder *enc)
{
    char err[1024];
    uint8_t *data;
    size_t len;
    if (cli_read_file(path, &data, &len, err, sizeof err)) {
        fprintf(stderr, "aurorapack bench: %s\n", err);
        return -1;
    }
    frame_layout layout;
    frame_layout_of(data, len, &layout);
    if (layout.kind != FRAME_FITS_IMAGE) {
        fprintf(stderr, "aurorapack bench: %s: no 16-bit 2-D image to benchmark (%s: %s)\n", path,
                frame_kind_name(layout.kind), layout.why);
        free(data);
        return -1;
    }
    uint64_t pixels = 0;
    for (int i = 0; i < layout.nregions; i++)
        pixels += (uint64_t)layout.regions[i].width * layout.regions[i].height;
    const aurp_region *img = &layout.regions[0];
    size_t npix = (size_t)img->width * img->height;
    uint16_t *pix = malloc(npix * sizeof *pix);
    char workdir[] = "/tmp/aurorapack-bench-XXXXXX";
    if (!pix || !mkdtemp(workdir)) {
        fprintf(stderr, "aurorapack bench: %s: cannot prepare (memory or temporary directory)\n", path);
        free(pix);
        free(data);
        return -1;
    }
    const uint8_t *be = data + img->offset;
    for (size_t i = 0; i < npix; i++) pix[i] = (uint16_t)(((be[2 * i] << 8) | be[2 * i + 1]) ^ 0x8000);

    printf("%s: %u x %u pixels (W x H)%s, %zu bytes; median of %d run%s\n", path, img->width,
           img->height, layout.nregions > 1 ? ", first of several images" : "", len, o->repeat,
           o->repeat == 1 ? "" : "s");
    printf("  %-44s %10s %7s %8s %10s %10s  %s\n", "codec", "bytes", "bpp", "/JPEG-LS", "encode ms",
           "decode ms", "what");
    bench_result rows[8];
    char self_name[160], gpu_name[160];
    int n = 0;
    char cpu_label[64];
    snprintf(cpu_label, sizeof cpu_label, "cpu, %d threads", o->threads);
    bench_self(data, len, &layout, o, NULL, cpu_label, &rows[n++], self_name, sizeof self_name);
    if (o->use_gpu) {
        const aurp_image_encoder *ie = cli_encoder_for(enc, img->width, img->height, err, sizeof err);
        if (ie) {
            bench_self(data, len, &layout, o, ie, cli_encoder_label(enc, o->threads), &rows[n++],
                       gpu_name, sizeof gpu_name);
        } else {
            memset(&rows[n], 0, sizeof rows[n]);
            rows[n].name = "aurorapack (gpu)";
            rows[n++].note = err;
        }
    }
    bench_result *jpegls = &rows[n];
    bench_charls(pix, img->width, img->height, o->repeat, &rows[n++]);
    bench_jxl(pix, img->width, img->height, workdir, o->repeat, &rows[n++]);
    bench_fpack(path, workdir, o->repeat, &rows[n++]);
    bench_stream_tool("bzip2", "bzip2 -9", path, workdir, o->repeat, &rows[n++]);
    bench_stream_tool("xz", "xz -9", path, workdir, o->repeat, &rows[n++]);
    double ref = jpegls->available && jpegls->ok ? 8.0 * (double)jpegls->bytes / (double)npix : 0;
    for (int i = 0; i < n; i++) print_row(&rows[i], rows[i].pixels_only ? npix : pixels, ref);
    printf("  * external process: times include process start-up and file I/O\n");
    printf("  bpp = 8 x bytes / pixels; '/JPEG-LS' = bpp relative to JPEG-LS (below 1 is smaller)\n\n");
    fflush(stdout);

    /* remove the work files */
    const char *names[] = {"pixels.pgm", "pixels.jxl", "decoded.pgm", "file.fits.fz",
                           "funpacked.fits", "file.bzip2", "file.bzip2.out", "file.xz",
                           "file.xz.out"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char p[4200];
        snprintf(p, sizeof p, "%s/%s", workdir, names[i]);
        unlink(p);
    }
    rmdir(workdir);
    free(pix);
    free(data);
    int self_ok = rows[0].ok;
    return self_ok ? 0 : -1;
}

int cmd_bench(int argc, char **argv)
{
    cli_options o;
    if (cli_parse("bench", argc, argv, "ptgr", &o)) return EXIT_USAGE;
    cli_encoder *enc = cli_encoder_open(&o);
    if (!enc) return EXIT_FILE_ERROR;
    int failed = 0;
    for (int i = 0; i < o.nfiles; i++) failed += bench_one(o.files[i], &o, enc) != 0;
    cli_encoder_close(enc);
    return failed ? EXIT_FILE_ERROR : 0;
}

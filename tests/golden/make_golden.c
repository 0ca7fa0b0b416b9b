/* Writes the golden streams of tests/golden/ (run once, by generate.sh):
 * for each case the original (NAME.orig), its .aurp (NAME.aurp), and a line
 * of MANIFEST: name, profile, region (offset width height, or 0 0 0), N M T,
 * and the XXH3-64 of the original.  test_core_golden decodes every stream and
 * re-encodes every original: a change to the format or to any arithmetic
 * shows up as a difference.
 *
 *   make_golden OUTDIR [TREX.fits]   (the real-frame case needs the file) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aurp.h"
#include "core_fitshdr.h"
#include "core_frames.h"
#include "sim.h"

static FILE *manifest;
static const char *outdir;

static int write_file(const char *name, const char *ext, const uint8_t *b, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s%s", outdir, name, ext);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "make_golden: %s: cannot write\n", path);
        return 1;
    }
    return 0;
}

static int emit(const char *name, int profile, const uint8_t *src, size_t n, const aurp_region *r, int N,
                int M, int T)
{
    aurp_params p = {profile, N, M, T};
    size_t cap = aurp_pack_bound(n), len;
    uint8_t *out = malloc(cap);
    aurp_error err = {{0}};
    if (aurp_pack(src, n, r, r ? 1 : 0, &p, NULL, 1, out, cap, &len, &err) != AURP_OK) {
        fprintf(stderr, "make_golden: %s: %s\n", name, err.msg);
        return 1;
    }
    int rc = write_file(name, ".orig", src, n) | write_file(name, ".aurp", out, len);
    fprintf(manifest, "%s %s %llu %u %u %d %d %d %016llx\n", name, aurp_profile_name(profile),
            r ? (unsigned long long)r->offset : 0ull,
            r ? r->width : 0, r ? r->height : 0, N, M, T, (unsigned long long)aurp_checksum(src, n));
    printf("%-12s %6zu -> %6zu bytes\n", name, n, len);
    free(out);
    return rc;
}

/* a FITS-like file of the pixels u: one 2880-byte header of cards, the
 * image, zero padding */
static uint8_t *fitslike_of(const uint16_t *u, uint32_t w, uint32_t h, size_t *n)
{
    size_t data = 2 * (size_t)w * h, total = 2880 + (data + 2879) / 2880 * 2880;
    uint8_t *f = calloc(1, total);
    memset(f, ' ', 2880);
    char card[81];
    const char *fmt[] = {"SIMPLE  =                    T", "BITPIX  =                   16",
                         "NAXIS   =                    2", "NAXIS1  = %20u", "NAXIS2  = %20u",
                         "BZERO   =                32768", "END"};
    for (int i = 0; i < 7; i++) {
        snprintf(card, sizeof card, fmt[i], i == 3 ? w : h);
        memcpy(f + 80 * i, card, strlen(card));
    }
    core_frame_to_be16(u, (size_t)w * h, f + 2880);
    *n = total;
    return f;
}

static uint8_t *fitslike(core_frame_kind kind, uint32_t w, uint32_t h, uint64_t seed, size_t *n)
{
    uint16_t *u = malloc(2 * (size_t)w * h);
    core_frame_make(kind, w, h, seed, u);
    uint8_t *f = fitslike_of(u, w, h, n);
    free(u);
    return f;
}

/* The lsmix predictor set (image stream header byte 22) the encoder picks
 * for the big-endian pixels be, or -1; its LS forgetting shift (byte 12)
 * into *forget, its flags (byte 23) into *flags. */
static int lsmix_set_of(const uint8_t *be, uint32_t w, uint32_t h, int *forget, int *flags)
{
    aurp_params p;
    aurp_params_for_profile(&p, AURP_PROFILE_LSMIX);
    size_t cap = aurp_image_bound(w, h), len;
    uint8_t *s = malloc(cap);
    aurp_error err = {{0}};
    const int ok = aurp_image_encode(be, w, h, &p, 1, s, cap, &len, &err) == AURP_OK;
    const int set = ok ? s[22] : -1;
    *forget = ok ? s[12] : 0;
    *flags = ok ? s[23] : 0;
    free(s);
    return set;
}

/* A simulated frame of the kind as a FITS-like file, and its lsmix stream;
 * want_set, want_forget and want_flags: the predictor set, the LS
 * forgetting shift and the header flags the case exists for (the run fails
 * when the encoder picks another set or shift or leaves one of those flags
 * clear, so that the case keeps covering them). */
static int emit_sim(const char *name, sim_kind kind, uint32_t w, uint32_t h, uint64_t seed, int want_set,
                    int want_forget, int want_flags)
{
    sim_options o;
    sim_options_for_kind(&o, kind);
    uint16_t *u = malloc(2 * (size_t)w * h);
    if (sim_frame(w, h, seed, 0, &o, u) != 0) {
        fprintf(stderr, "make_golden: %s: the simulator failed\n", name);
        free(u);
        return 1;
    }
    size_t n;
    uint8_t *f = fitslike_of(u, w, h, &n);
    free(u);
    int forget, flags, set = lsmix_set_of(f + 2880, w, h, &forget, &flags), rc = 1;
    if (set != want_set || forget != want_forget || (flags & want_flags) != want_flags)
        fprintf(stderr,
                "make_golden: %s: the encoder picks predictor set %d, forgetting %d and flags %#x, not %d, %d and %#x\n",
                name, set, forget, (unsigned)flags, want_set, want_forget, (unsigned)want_flags);
    else
        rc = emit(name, AURP_PROFILE_LSMIX, f, n, &(aurp_region){2880, w, h}, 6, 9, 0);
    free(f);
    return rc;
}

/* The pixels of the lsmix cases for rare paths of the decoder:
 *   edges (202 x 365): 330 rows of zeros, where LS's first pivot fails
 *     in every column (K' = 0) and one context counts more than 2^16
 *     pixels (its counts halve), then rows of a ramp with noise and
 *     spikes; 73730 pixels leave a last segment of 2, all of whose
 *     symbols fit in the carry (it closes at the segment's end);
 *   column (1 x 3000): W = 1, a triangle wave with noise. */
static uint16_t *rare_paths_frame(int column, uint32_t *w, uint32_t *h)
{
    *w = column ? 1 : 202;
    *h = column ? 3000 : 365;
    uint16_t *u = malloc(2 * (size_t)*w * *h);
    uint64_t s = column ? 21 : 20;
    for (uint32_t m = 0; m < *h; m++)
        for (uint32_t n = 0; n < *w; n++) {
            const uint32_t tri = m % 400 < 200 ? m % 400 : 400 - m % 400;
            uint32_t v = column    ? 2000 + 3 * tri + (uint32_t)(core_rand(&s) % 5)
                         : m < 330 ? 0
                                   : 1000 + 3 * n + 5 * (m - 330) + (uint32_t)(core_rand(&s) % 7);
            if (!column && m >= 330 && core_rand(&s) % 97 == 0) v = (uint32_t)(core_rand(&s) % 65536);
            u[(size_t)m * *w + n] = (uint16_t)v;
        }
    return u;
}

static int emit_rare_paths(const char *name, int column)
{
    uint32_t w, h;
    size_t n;
    uint16_t *u = rare_paths_frame(column, &w, &h);
    uint8_t *f = fitslike_of(u, w, h, &n);
    free(u);
    int rc = emit(name, AURP_PROFILE_LSMIX, f, n, &(aurp_region){2880, w, h}, 6, 9, 0);
    free(f);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: make_golden OUTDIR [TREX.fits]\n");
        return 2;
    }
    outdir = argv[1];
    char mpath[4096];
    snprintf(mpath, sizeof mpath, "%s/MANIFEST", outdir);
    manifest = fopen(mpath, "w");
    if (!manifest) {
        fprintf(stderr, "make_golden: %s: cannot write\n", mpath);
        return 1;
    }
    /* the generated cases; "general" and "text" are the first 2880 bytes
     * of the stored case's file with no image region (bytes only): the
     * paper profile codes them with the general coder, lsmix with the text
     * coder */
    static const struct {
        const char *name;
        int profile;
        core_frame_kind kind;
        uint32_t w, h;
        uint64_t seed;
        int N, M, T;
    } cases[] = {
        {"spectrum", AURP_PROFILE_PAPER, CORE_FRAME_SPECTRUM, 96, 40, 1, 11, 7, 13},
        {"degenerate", AURP_PROFILE_PAPER, CORE_FRAME_DEGENERATE, 37, 23, 2, 5, 3, 0},
        {"order32", AURP_PROFILE_PAPER, CORE_FRAME_SPECTRUM, 50, 20, 3, 32, 16, 1},
        {"stored", AURP_PROFILE_PAPER, CORE_FRAME_NOISE, 16, 16, 4, 11, 7, 13}, /* noise: stored */
        {"general", AURP_PROFILE_PAPER, CORE_FRAME_NOISE, 16, 16, 4, 11, 7, 13},
        /* lsmix: a spectrum, singular systems, the smallest image, more
         * pixels than one table refresh block */
        {"lsmix_spectrum", AURP_PROFILE_LSMIX, CORE_FRAME_SPECTRUM, 96, 40, 1, 6, 9, 0},
        {"lsmix_degenerate", AURP_PROFILE_LSMIX, CORE_FRAME_DEGENERATE, 37, 23, 2, 16, 17, 0},
        {"lsmix_1x1", AURP_PROFILE_LSMIX, CORE_FRAME_SPECTRUM, 1, 1, 5, 6, 9, 0},
        {"lsmix_20000px", AURP_PROFILE_LSMIX, CORE_FRAME_SPECTRUM, 200, 100, 6, 1, 3, 0},
        {"text", AURP_PROFILE_LSMIX, CORE_FRAME_NOISE, 16, 16, 4, 6, 9, 0},
    };
    int rc = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t n;
        uint8_t *f = fitslike(cases[c].kind, cases[c].w, cases[c].h, cases[c].seed, &n);
        aurp_region r = {2880, cases[c].w, cases[c].h};
        int bytes_only = strcmp(cases[c].name, "general") == 0 || strcmp(cases[c].name, "text") == 0;
        rc |= emit(cases[c].name, cases[c].profile, f, bytes_only ? 2880 : n, bytes_only ? NULL : &r,
                   cases[c].N, cases[c].M, cases[c].T);
        free(f);
    }
    /* curved echelle orders: predictor set 3 (RL, LG and BR) with the
     * weighted LS of forgetting 2^-1 and the cascade, which no other case
     * has together */
    rc |= emit_sim("lsmix_echelle", SIM_KIND_ECHELLE, 192, 96, 3, 3, 1, 4);
    /* set 3 on the unweighted LS of forgetting 2^-2, with the cascade: an
     * echelle's arc lamp */
    rc |= emit_sim("lsmix_echelle_arc", SIM_KIND_ECHELLE_ARC, 256, 96, 1, 3, 2, 4);
    /* predictor set 3 with the cascade's wide support (flag bits 2 and 4):
     * a long-slit arc lamp's curved lines */
    rc |= emit_sim("lsmix_arc_wide", SIM_KIND_ARC, 1024, 96, 2, 3, 1, 4 | 16);
    rc |= emit_rare_paths("lsmix_edges", 0);
    rc |= emit_rare_paths("lsmix_column", 1);
    if (argc > 2) { /* 16 rows of a real frame */
        size_t len;
        uint8_t *t = core_read_file(argv[2], &len);
        aurp_region tr;
        if (!t || core_fits_primary_image(t, len, &tr.offset, &tr.width, &tr.height) != 0 || tr.height < 16) {
            fprintf(stderr, "make_golden: %s: cannot read its image\n", argv[2]);
            return 1;
        }
        const uint32_t rows = tr.height;
        tr.height = 16;
        rc |= emit("trex16", AURP_PROFILE_PAPER, t, (size_t)tr.offset + 2 * (size_t)tr.width * 16, &tr, 11, 7, 13);
        rc |= emit("lsmix_trex16", AURP_PROFILE_LSMIX, t, (size_t)tr.offset + 2 * (size_t)tr.width * 16, &tr, 6, 9, 0);
        if (rows >= 64) { /* 64 rows: enough for the cascade stage to win (header byte 23 bit 2) */
            aurp_region t64 = tr;
            t64.height = 64;
            rc |= emit("lsmix_trex64", AURP_PROFILE_LSMIX, t, (size_t)t64.offset + 2 * (size_t)t64.width * 64, &t64,
                       6, 9, 0);
        }
        if (rows >= 96) { /* 96 rows: the cascade's wide support pays for its weights (header byte 23 bit 4);
                           * on 64 the narrow one is chosen */
            aurp_region t96 = tr;
            t96.height = 96;
            rc |= emit("lsmix_trex96", AURP_PROFILE_LSMIX, t, (size_t)t96.offset + 2 * (size_t)t96.width * 96, &t96,
                       6, 9, 0);
        }
        free(t);
    }
    fclose(manifest);
    return rc;
}

/* The peers of `aurorapack bench`: other lossless coders on the same data. */
#ifndef BENCH_H
#define BENCH_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *name;
    int available;       /* 0: "not installed" */
    int external;        /* timed as an external process */
    int ok;              /* ran and (where checked) restored the input */
    int pixels_only;     /* coded the first image's pixels, not the whole file */
    const char *note;    /* why not ok, or what was measured */
    uint64_t bytes;      /* compressed size */
    double enc_ms, dec_ms; /* medians */
} bench_result;

/* JPEG-LS (CharLS, opened on first use: bench_charls.c) in process on
 * width x height 16-bit samples. */
void bench_charls(const uint16_t *pix, uint32_t width, uint32_t height, int repeat,
                  bench_result *r);

/* External tools: they work on files in workdir. */
void bench_jxl(const uint16_t *pix, uint32_t width, uint32_t height, const char *workdir,
               int repeat, bench_result *r);
void bench_fpack(const char *fits_path, const char *workdir, int repeat, bench_result *r);
void bench_stream_tool(const char *tool, const char *name, const char *fits_path,
                       const char *workdir, int repeat, bench_result *r);

double bench_median(double *v, int n);
int bench_have_program(const char *name);

#endif

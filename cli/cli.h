/* aurorapack: shared declarations of the subcommands and their helpers. */
#ifndef CLI_H
#define CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "aurp.h"

#define AURORAPACK_VERSION "0.1.0"

/* Exit codes: 0 all files done; 1 at least one file failed; 2 usage error. */
enum { EXIT_FILE_ERROR = 1, EXIT_USAGE = 2 };

typedef struct {
    aurp_params params;
    int threads;      /* CPU threads (default: online CPUs) */
    int force;        /* -f */
    const char *out;  /* -o */
    int any;          /* --any: pack non-FITS with the general coder */
    int json;         /* --json */
    int repeat;       /* bench --repeat */
    int use_gpu;      /* --gpu given */
    int gpu_fallback; /* --gpu-fallback */
    int gpu_all;      /* --gpu all */
    int gpu_devices[16];
    int gpu_ndevices;
    int quiet;        /* -q */
    int threads_given; /* --threads was given (else derived from -j) */
    const char *outdir;     /* -C DIR: restore into DIR */
    int jobs;               /* -j N: files in parallel (default: online CPUs) */
    const char *files_from; /* --files-from FILE ('-': standard input) */
    uint64_t max_output;    /* --max-output SIZE (default AURP_DEFAULT_MAX_OUTPUT) */
    char **files;
    int nfiles;
} cli_options;

/* Option letters a subcommand accepts, e.g. "NMTpgtfoa"; for the bulk
 * options: 'C' -C DIR, 'J' -j N, 'F' --files-from, 'L' --max-output. */
int cli_parse(const char *cmd, int argc, char **argv, const char *allowed, cli_options *o);

int cli_nproc(void);

/* File helpers.  Errors name the path and the reason in err. */
int cli_read_file(const char *path, uint8_t **data, size_t *len, char *err, size_t err_len);
/* Writes data to path atomically: a temp file in the same directory, fsync,
 * rename (refusing to replace an existing path unless force). */
int cli_write_atomic(const char *path, const uint8_t *data, size_t len, int force, char *err,
                     size_t err_len);
int cli_exists(const char *path);
/* An input operand: the whole of standard input where path is "-", else
 * the file. */
int cli_read_input(const char *path, uint8_t **data, size_t *len, char *err, size_t err_len);
/* Writes all of data to fd (EINTR and short writes handled). */
int cli_write_all(int fd, const uint8_t *data, size_t len);

/* An output written in pieces and moved into place only when complete
 * (cli_write_atomic in steps): open, write..., then commit or abort. */
typedef struct {
    int fd;
    int force;
    char path[4096], dir[4096], tmp[8300];
} cli_atomic;
int cli_atomic_open(cli_atomic *a, const char *path, int force, char *err, size_t err_len);
int cli_atomic_write(cli_atomic *a, const uint8_t *data, size_t len, char *err, size_t err_len);
int cli_atomic_commit(cli_atomic *a, char *err, size_t err_len);
void cli_atomic_abort(cli_atomic *a);
/* Read once at start (before any thread): restored files get 0666 & ~umask. */
void cli_init_umask(void);
/* mkdir -p of the directories above path (not path itself). */
int cli_make_parents(const char *path, char *err, size_t err_len);

/* The inputs of a bulk command: the operands and --files-from names, each
 * directory replaced by the files under it whose name ends in suffix
 * (recursively, sorted).  rel: the name below an output directory (-C):
 * the base name of a file operand, the path below a directory operand. */
typedef struct {
    char *path; /* "-" for standard input */
    char *rel;
} cli_input;
typedef struct {
    cli_input *items;
    size_t n, cap;
} cli_inputs;
/* Returns 0, or -1 with the reason printed (a missing list file, ...). */
int cli_collect_inputs(const char *cmd, const cli_options *o, const char *suffix, cli_inputs *out);
void cli_inputs_free(cli_inputs *in);
int cli_ends_with(const char *s, const char *suffix);
double cli_now_ms(void);

/* Image encoder selection for --gpu / --cpu. */
typedef struct cli_encoder cli_encoder;
/* NULL with the reason printed when the GPU was asked for and cannot be
 * used (and no --gpu-fallback). */
cli_encoder *cli_encoder_open(const cli_options *o);
/* The encoder for frames up to width x height: NULL = the CPU encoder. */
const aurp_image_encoder *cli_encoder_for(cli_encoder *e, uint32_t width, uint32_t height,
                                          char *err, size_t err_len);
const char *cli_encoder_label(cli_encoder *e, int threads);
int cli_encoder_falls_back(const cli_encoder *e);
void cli_encoder_close(cli_encoder *e);

int cmd_pack(int argc, char **argv);
int cmd_unpack(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_bench(int argc, char **argv);

#endif

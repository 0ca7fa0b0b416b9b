/* Option parsing shared by the subcommands, and the --gpu/--cpu encoder. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aurp_gpu.h"
#include "cli.h"

int cli_nproc(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}

static int parse_int(const char *cmd, const char *opt, const char *s, int lo, int hi, int *v)
{
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (errno || end == s || *end || x < lo || x > hi) {
        fprintf(stderr, "aurorapack %s: %s: expected an integer %d..%d, got '%s'\n", cmd, opt, lo,
                hi, s);
        return -1;
    }
    *v = (int)x;
    return 0;
}

/* SIZE: bytes, or with a binary suffix K, M, G, T (KiB ...), e.g. 4G. */
static int parse_size(const char *cmd, const char *opt, const char *s, uint64_t *v)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    int shift = 0;
    if (*end && !end[1]) {
        switch (*end | 0x20) {
        case 'k': shift = 10; end++; break;
        case 'm': shift = 20; end++; break;
        case 'g': shift = 30; end++; break;
        case 't': shift = 40; end++; break;
        }
    }
    if (errno || end == s || *end || s[0] == '-' || x == 0 || x > (UINT64_MAX >> 1) >> shift) {
        fprintf(stderr, "aurorapack %s: %s: expected a size like 4294967296, 512M or 4G; got '%s'\n",
                cmd, opt, s);
        return -1;
    }
    *v = (uint64_t)x << shift;
    return 0;
}

static int parse_gpu_list(const char *cmd, const char *s, cli_options *o)
{
    o->use_gpu = 1;
    if (!strcmp(s, "all")) {
        o->gpu_all = 1;
        return 0;
    }
    o->gpu_ndevices = 0;
    const char *p = s;
    while (*p) {
        char *end;
        errno = 0;
        long d = strtol(p, &end, 10);
        if (errno || end == p || d < 0 || d >= AURP_GPU_MAX_DEVICES || (*end && *end != ',') ||
            o->gpu_ndevices == AURP_GPU_MAX_DEVICES) {
            fprintf(stderr, "aurorapack %s: --gpu: expected 'all' or device numbers like 0,1; got '%s'\n",
                    cmd, s);
            return -1;
        }
        o->gpu_devices[o->gpu_ndevices++] = (int)d;
        p = *end ? end + 1 : end;
    }
    if (o->gpu_ndevices == 0) {
        fprintf(stderr, "aurorapack %s: --gpu: empty device list\n", cmd);
        return -1;
    }
    return 0;
}

/* allowed: option letters; 'p' = codec parameters (-N -M -T --profile),
 * 't' threads, 'g' --gpu/--cpu/--gpu-fallback, 'f' -f, 'o' -o, 'a' --any,
 * 'j' --json, 'r' --repeat, 'q' -q. */
int cli_parse(const char *cmd, int argc, char **argv, const char *allowed, cli_options *o)
{
    enum { O_PROFILE = 256, O_THREADS, O_GPU, O_CPU, O_FALLBACK, O_ANY, O_JSON, O_REPEAT, O_HELP,
           O_FILES_FROM, O_MAX_OUTPUT };
    static const struct option longopts[] = {
        {"profile", required_argument, 0, O_PROFILE}, {"threads", required_argument, 0, O_THREADS},
        {"gpu", required_argument, 0, O_GPU}, {"cpu", no_argument, 0, O_CPU},
        {"gpu-fallback", no_argument, 0, O_FALLBACK}, {"any", no_argument, 0, O_ANY},
        {"json", no_argument, 0, O_JSON}, {"repeat", required_argument, 0, O_REPEAT},
        {"force", no_argument, 0, 'f'}, {"output", required_argument, 0, 'o'},
        {"quiet", no_argument, 0, 'q'}, {"help", no_argument, 0, O_HELP},
        {"directory", required_argument, 0, 'C'}, {"jobs", required_argument, 0, 'j'},
        {"files-from", required_argument, 0, O_FILES_FROM},
        {"max-output", required_argument, 0, O_MAX_OUTPUT}, {0, 0, 0, 0}};
    memset(o, 0, sizeof *o);
    aurp_params_default(&o->params);
    o->threads = cli_nproc();
    o->repeat = 3;
    o->jobs = cli_nproc();
    o->max_output = AURP_DEFAULT_MAX_OUTPUT;
    optind = 1;
    opterr = 0;
    int ch, idx;
    /* -N -M -T given on the command line; the rest are the profile's defaults */
    int N = -1, M = -1, T = -1;
    while ((ch = getopt_long(argc, argv, "+N:M:T:fo:qC:j:", longopts, &idx)) != -1) {
        char need = 0;
        switch (ch) {
        case 'N': case 'M': case 'T': case O_PROFILE: need = 'p'; break;
        case O_THREADS: need = 't'; break;
        case O_GPU: case O_CPU: case O_FALLBACK: need = 'g'; break;
        case 'f': need = 'f'; break;
        case 'o': need = 'o'; break;
        case O_ANY: need = 'a'; break;
        case O_JSON: need = 'j'; break;
        case O_REPEAT: need = 'r'; break;
        case 'q': need = 'q'; break;
        case 'C': need = 'C'; break;
        case 'j': need = 'J'; break;
        case O_FILES_FROM: need = 'F'; break;
        case O_MAX_OUTPUT: need = 'L'; break;
        case O_HELP:
            fprintf(stdout, "see 'aurorapack --help' and docs/CLI.md\n");
            exit(0);
        default:
            if (optopt && optopt < 256)
                fprintf(stderr, "aurorapack %s: unknown option or missing value: -%c\n", cmd, optopt);
            else
                fprintf(stderr, "aurorapack %s: unknown option or missing value: %s\n", cmd,
                        argv[optind - 1]);
            return -1;
        }
        if (!strchr(allowed, need)) {
            fprintf(stderr, "aurorapack %s: option %s does not apply to this command\n", cmd,
                    argv[optind - 1]);
            return -1;
        }
        int v;
        switch (ch) {
        case 'N':
            if (parse_int(cmd, "-N", optarg, 1, 32, &N)) return -1;
            break;
        case 'M':
            if (parse_int(cmd, "-M", optarg, 1, 17, &M)) return -1;
            break;
        case 'T':
            if (parse_int(cmd, "-T", optarg, 0, 1 << 30, &T)) return -1;
            break;
        case O_PROFILE:
            v = aurp_profile_from_name(optarg);
            if (!v) {
                fprintf(stderr, "aurorapack %s: --profile: unknown profile '%s' (known: lsmix, paper)\n",
                        cmd, optarg);
                return -1;
            }
            aurp_params_for_profile(&o->params, v);
            break;
        case O_THREADS:
            if (parse_int(cmd, "--threads", optarg, 1, 256, &o->threads)) return -1;
            o->threads_given = 1;
            break;
        case 'C': o->outdir = optarg; break;
        case 'j':
            if (parse_int(cmd, "-j", optarg, 1, 1024, &o->jobs)) return -1;
            break;
        case O_FILES_FROM: o->files_from = optarg; break;
        case O_MAX_OUTPUT:
            if (parse_size(cmd, "--max-output", optarg, &o->max_output)) return -1;
            break;
        case O_GPU:
            if (parse_gpu_list(cmd, optarg, o)) return -1;
            break;
        case O_CPU: o->use_gpu = 0; o->gpu_ndevices = 0; o->gpu_all = 0; break;
        case O_FALLBACK: o->gpu_fallback = 1; break;
        case 'f': o->force = 1; break;
        case 'o': o->out = optarg; break;
        case O_ANY: o->any = 1; break;
        case O_JSON: o->json = 1; break;
        case O_REPEAT:
            if (parse_int(cmd, "--repeat", optarg, 1, 1000, &o->repeat)) return -1;
            break;
        case 'q': o->quiet = 1; break;
        }
    }
    if (N >= 0) o->params.order = N;
    if (M >= 0) o->params.equations = M;
    if (T >= 0) o->params.threshold = T;
    aurp_error err = {{0}};
    if (aurp_params_check(&o->params, &err) != AURP_OK) {
        fprintf(stderr, "aurorapack %s: bad codec parameters: %s\n", cmd, err.msg);
        return -1;
    }
    o->files = argv + optind;
    o->nfiles = argc - optind;
    if (o->nfiles == 0 && !o->files_from) {
        fprintf(stderr, "aurorapack %s: no input file\n", cmd);
        return -1;
    }
    if (o->out && o->outdir) {
        fprintf(stderr, "aurorapack %s: -o and -C exclude each other\n", cmd);
        return -1;
    }
    if (o->out && (o->nfiles > 1 || o->files_from)) {
        fprintf(stderr, "aurorapack %s: -o needs exactly one input file (got %d)\n", cmd, o->nfiles);
        return -1;
    }
    return 0;
}

/* ---- encoder selection ------------------------------------------------ */

struct cli_encoder {
    int use_gpu, fallback, falls_back;
    int devices[AURP_GPU_MAX_DEVICES], ndevices;
    aurp_gpu *gpu;
    uint32_t max_w, max_h;
    aurp_image_encoder enc;
    char label[64];
};

cli_encoder *cli_encoder_open(const cli_options *o)
{
    cli_encoder *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    if (!o->use_gpu) return e;
    char why[256] = "";
    int count = aurp_gpu_count(why, sizeof why);
    if (count > 0 && !aurp_gpu_has_profile(o->params.profile)) {
        count = 0;
        snprintf(why, sizeof why, "the GPU encoder does not have profile %s yet",
                 aurp_profile_name(o->params.profile));
    }
    if (count <= 0) {
        if (!o->gpu_fallback) {
            fprintf(stderr, "aurorapack: --gpu: no usable GPU: %s (use --cpu, or --gpu-fallback to fall back to the CPU)\n", why);
            free(e);
            return NULL;
        }
        fprintf(stderr, "aurorapack: --gpu: no usable GPU (%s): using the CPU\n", why);
        e->falls_back = 1;
        return e;
    }
    e->use_gpu = 1;
    e->fallback = o->gpu_fallback;
    if (o->gpu_all) {
        for (int i = 0; i < count && i < AURP_GPU_MAX_DEVICES; i++) e->devices[e->ndevices++] = i;
    } else {
        for (int i = 0; i < o->gpu_ndevices; i++) {
            if (o->gpu_devices[i] >= count) {
                fprintf(stderr, "aurorapack: --gpu: device %d does not exist (%d device%s)\n",
                        o->gpu_devices[i], count, count == 1 ? "" : "s");
                free(e);
                return NULL;
            }
            e->devices[e->ndevices++] = o->gpu_devices[i];
        }
    }
    return e;
}

const aurp_image_encoder *cli_encoder_for(cli_encoder *e, uint32_t width, uint32_t height,
                                          char *err, size_t err_len)
{
    if (err_len) err[0] = '\0';
    if (!e->use_gpu) return NULL;
    if (e->gpu && width <= e->max_w && height <= e->max_h) return &e->enc;
    if (e->gpu) aurp_gpu_close(e->gpu);
    e->gpu = NULL;
    uint32_t w = width > e->max_w ? width : e->max_w, h = height > e->max_h ? height : e->max_h;
    aurp_error ae = {{0}};
    if (aurp_gpu_open(e->devices, e->ndevices, w, h, &e->gpu, &ae) != AURP_OK) {
        snprintf(err, err_len, "cannot open the GPU: %s", ae.msg);
        e->gpu = NULL;
        return NULL;
    }
    e->max_w = w, e->max_h = h;
    e->enc = aurp_gpu_encoder(e->gpu);
    return &e->enc;
}

const char *cli_encoder_label(cli_encoder *e, int threads)
{
    if (e->use_gpu && e->gpu) snprintf(e->label, sizeof e->label, "%s", aurp_gpu_label(e->gpu));
    else snprintf(e->label, sizeof e->label, "cpu, %d thread%s", threads, threads == 1 ? "" : "s");
    return e->label;
}

int cli_encoder_falls_back(const cli_encoder *e) { return e->fallback; }

void cli_encoder_close(cli_encoder *e)
{
    if (!e) return;
    if (e->gpu) aurp_gpu_close(e->gpu);
    free(e);
}

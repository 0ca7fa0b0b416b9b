/* The GPU image encoder (gpu/aurp_gpu.h): host-side orchestration.
 *
 * One frame on G devices (column split, paper section 4.4):
 *   every device   pinned frame -> device, unpack, lag sums and residuals of
 *                  its band [c0, c1) (its sums start N+M-1 columns left of
 *                  c0, the halo its windows reach); a device g > 0 sends its
 *                  band of residuals to device 0 (peer copy);
 *   device 0       histogram; T-/T+ found on the device and only the bins
 *                  of [T-, T+] sent to the host, which builds the plan with
 *                  the core's aurp_plan_build_range (the same plan as
 *                  aurp_plan_build, the one definition of the frequencies);
 *                  the host sends freq/cum back; device 0 rANS-codes the
 *                  segments and assembles segment lengths, segments and
 *                  escapes; -> host; aurp_stream_write adds header and table.
 * All buffers are allocated in aurp_gpu_open for the largest frame and reused.
 * Every CUDA error becomes AURP_ERR_BACKEND naming the device and the call. */
#include "aurp_gpu.h"
#include "gpu_kernels.h"
#include "imgstream.h"
#include "lsmix.h"
#include "lsmix_encoder.h"
#include "lsmix_kernels.h"
#include "predict.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct gpu_device {
    int ordinal;
    int sms;           /* streaming multiprocessors */
    cudaStream_t stream;
    cudaEvent_t band_done;
    uint8_t *be;       /* frame as given, big-endian */
    uint16_t *x;       /* u = bits ^ 0x8000 */
    uint64_t *lag;     /* [N+1][H][span] lag sums of this band */
    int32_t *e_band;   /* g > 0: residuals of the band, [H][c1-c0] */
    int32_t *lsx_cm;   /* g > 0, lsmix: column means A then B, [2][H][W], then [H] the weighted LS's row
                        * minima (made on first use) */
    double *lsx_band;  /* g > 0, lsmix: the band's LS of both trainings, [2][H][c1-c0] */
    size_t lsx_px;     /* pixels lsx_cm and lsx_band are made for */
    size_t lag_cap;    /* elements */
    size_t band_cap;   /* elements */
};

struct aurp_gpu {
    int ndev;
    int lsx_split_all; /* tests only: lsmix frames split over every device, as wide as they are */
    struct gpu_device dev[AURP_GPU_MAX_DEVICES];
    uint32_t max_w, max_h;
    size_t max_px;
    uint32_t max_seg;
    char label[8 * AURP_GPU_MAX_DEVICES];
    /* pinned host */
    uint8_t *h_in;      /* frame staging (the caller may fill it directly) */
    uint32_t *h_hist;   /* [AURP_GPU_HIST_BINS]: [T-, T+] when wider than the slice */
    uint64_t *h_range;  /* {first, last} bin of [T-, T+], then its first bins */
    uint32_t *h_table;  /* freq[nsym] then cum[nsym + 1] */
    uint64_t *h_totals; /* [2] */
    uint8_t *h_body;    /* seg lengths | segments | escapes */
    size_t body_cap;
    uint64_t *hist64;   /* malloc: the plan's input */
    /* device 0 */
    int32_t *d_e;       /* residuals of the whole frame */
    uint32_t *d_hist, *d_table;
    uint64_t *d_range;  /* gpu_hist_range's output */
    uint4 *d_symtab;    /* per-symbol coder entries */
    uint8_t *d_scratch, *d_body;
    size_t slot;
    uint32_t *d_seg; /* seg_len | seg_esc | seg_off | esc_off, max_seg each */
    uint64_t *d_totals;
    lsx_gpu_state *lsx; /* the lsmix profile's buffers on device 0, made on first use */
    /* stage timing on device 0 (aurp_gpu_profile) */
    int profile;
    cudaEvent_t ev[AURP_GPU_STAGES + 1];
    double host_plan_ms;
    double stage_ms[AURP_GPU_STAGES];
};

#define MARK(i) do { if (g->profile) cudaEventRecord(g->ev[i], g->dev[0].stream); } while (0)

#define CK(dev, call)                                                                          \
    do {                                                                                       \
        cudaError_t rc_ = (call);                                                              \
        if (rc_ != cudaSuccess)                                                                \
            return aurp_fail(err, AURP_ERR_BACKEND, "gpu:%d: %s: %s", (dev), #call,           \
                             cudaGetErrorString(rc_));                                         \
    } while (0)

extern "C" int aurp_gpu_count(char *why, size_t why_len)
{
    int n = 0;
    cudaError_t rc = cudaGetDeviceCount(&n);
    if (rc != cudaSuccess) {
        if (why && why_len) snprintf(why, why_len, "no usable CUDA device: %s", cudaGetErrorString(rc));
        cudaGetLastError();
        return 0;
    }
    if (n == 0 && why && why_len) snprintf(why, why_len, "the CUDA driver reports no device");
    return n;
}

/* Band of device g of G over W columns: [W*g/G, W*(g+1)/G). */
static void band_of(uint32_t W, int g, int G, uint32_t *c0, uint32_t *c1)
{
    *c0 = (uint32_t)((uint64_t)W * (uint64_t)g / (uint64_t)G);
    *c1 = (uint32_t)((uint64_t)W * (uint64_t)(g + 1) / (uint64_t)G);
}

static const uint32_t max_halo = AURP_MAX_ORDER + AURP_MAX_EQUATIONS - 1;

static size_t nseg_of(size_t px) { return (px + ((size_t)1 << AURP_SEG_LOG2) - 1) >> AURP_SEG_LOG2; }

extern "C" aurp_status aurp_gpu_open(const int *devices, int ndevices, uint32_t max_width,
                                     uint32_t max_height, aurp_gpu **out, aurp_error *err)
{
    *out = NULL;
    if (ndevices < 1 || ndevices > AURP_GPU_MAX_DEVICES)
        return aurp_fail(err, AURP_ERR_PARAM, "gpu: %d devices requested, 1..%d supported", ndevices,
                    AURP_GPU_MAX_DEVICES);
    if (max_width < 1 || max_height < 1 || max_width > AURP_GPU_MAX_SIDE || max_height > AURP_GPU_MAX_SIDE)
        return aurp_fail(err, AURP_ERR_PARAM, "gpu: frame limit %ux%u outside 1..%d per side", max_width,
                    max_height, AURP_GPU_MAX_SIDE);
    char why[160];
    int have = aurp_gpu_count(why, sizeof why);
    if (have == 0) return aurp_fail(err, AURP_ERR_BACKEND, "gpu: %s", why);
    for (int i = 0; i < ndevices; i++) {
        if (devices[i] < 0 || devices[i] >= have)
            return aurp_fail(err, AURP_ERR_PARAM, "gpu: device %d does not exist (%d present)", devices[i], have);
        /* AURP_GPU_TEST_SAME_DEVICE (tests only): a device may be named more
         * than once, so that the column split runs on a one-GPU machine */
        for (int j = 0; j < i && !getenv("AURP_GPU_TEST_SAME_DEVICE"); j++)
            if (devices[j] == devices[i])
                return aurp_fail(err, AURP_ERR_PARAM, "gpu: device %d named twice", devices[i]);
    }
    aurp_gpu *g = (aurp_gpu *)calloc(1, sizeof *g);
    if (!g) return aurp_fail(err, AURP_ERR_NOMEM, "gpu: out of memory");
    g->ndev = ndevices;
    /* AURP_GPU_TEST_LSMIX_SPLIT_ALL (tests only): every device's band code
     * runs on frames narrower than lsx_split_devices would split */
    g->lsx_split_all = getenv("AURP_GPU_TEST_LSMIX_SPLIT_ALL") != NULL;
    g->max_w = max_width;
    g->max_h = max_height;
    g->max_px = (size_t)max_width * max_height;
    g->max_seg = (uint32_t)nseg_of(g->max_px);
    size_t off = 0;
    off += (size_t)snprintf(g->label, sizeof g->label, "gpu:");
    for (int i = 0; i < ndevices && off < sizeof g->label; i++)
        off += (size_t)snprintf(g->label + off, sizeof g->label - off, i ? "+%d" : "%d", devices[i]);
    aurp_status st = AURP_OK;
    *out = g; /* from here on, aurp_gpu_close frees whatever was made */
#define OPEN_CK(dev, call)                                                                     \
    do {                                                                                       \
        cudaError_t rc_ = (call);                                                              \
        if (rc_ != cudaSuccess) {                                                              \
            st = aurp_fail(err, AURP_ERR_BACKEND, "gpu:%d: %s: %s", (dev), #call,              \
                           cudaGetErrorString(rc_));                                           \
            goto fail_open;                                                                    \
        }                                                                                      \
    } while (0)
    for (int i = 0; i < ndevices; i++) {
        struct gpu_device *d = &g->dev[i];
        d->ordinal = devices[i];
        OPEN_CK(d->ordinal, cudaSetDevice(d->ordinal));
        OPEN_CK(d->ordinal, cudaDeviceGetAttribute(&d->sms, cudaDevAttrMultiProcessorCount, d->ordinal));
        OPEN_CK(d->ordinal, cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking));
        OPEN_CK(d->ordinal, cudaEventCreateWithFlags(&d->band_done, cudaEventDisableTiming));
        uint32_t c0, c1, widest = 0;
        for (int b = 0; b < ndevices; b++) {
            band_of(max_width, b, ndevices, &c0, &c1);
            if (c1 - c0 > widest) widest = c1 - c0;
        }
        widest += 1; /* a narrower frame's band can be one column wider */
        size_t span = widest + max_halo;
        if (span > max_width) span = max_width;
        d->lag_cap = (size_t)(AURP_MAX_ORDER + 1) * max_height * span;
        d->band_cap = (size_t)max_height * widest;
        OPEN_CK(d->ordinal, cudaMalloc((void **)&d->be, 2 * g->max_px));
        OPEN_CK(d->ordinal, cudaMalloc((void **)&d->x, 2 * g->max_px));
        OPEN_CK(d->ordinal, cudaMalloc((void **)&d->lag, d->lag_cap * sizeof(uint64_t)));
        if (i > 0) {
            OPEN_CK(d->ordinal, cudaMalloc((void **)&d->e_band, d->band_cap * sizeof(int32_t)));
            int can = 0;
            if (cudaDeviceCanAccessPeer(&can, d->ordinal, devices[0]) == cudaSuccess && can) {
                cudaError_t rc = cudaDeviceEnablePeerAccess(devices[0], 0);
                if (rc != cudaSuccess && rc != cudaErrorPeerAccessAlreadyEnabled)
                    OPEN_CK(d->ordinal, rc);
                cudaGetLastError();
            }
        }
    }
    {
        int d0 = devices[0];
        OPEN_CK(d0, cudaSetDevice(d0));
        g->slot = 4 + 3 * ((size_t)1 << AURP_SEG_LOG2);
        g->body_cap = 4 * (size_t)g->max_seg + g->slot * g->max_seg + 2 * g->max_px;
        OPEN_CK(d0, cudaMalloc((void **)&g->d_e, 4 * g->max_px));
        OPEN_CK(d0, cudaMalloc((void **)&g->d_hist, 4 * (size_t)AURP_GPU_HIST_BINS));
        OPEN_CK(d0, cudaMalloc((void **)&g->d_table, 4 * (2 * (size_t)AURP_GPU_HIST_BINS + 4)));
        OPEN_CK(d0, cudaMalloc((void **)&g->d_range, 8 * (2 + (size_t)AURP_GPU_SLICE_CAP)));
        OPEN_CK(d0, cudaMalloc((void **)&g->d_symtab, sizeof(uint4) * ((size_t)AURP_GPU_HIST_BINS + 1)));
        OPEN_CK(d0, cudaMalloc((void **)&g->d_scratch, g->slot * g->max_seg));
        OPEN_CK(d0, cudaMalloc((void **)&g->d_body, g->body_cap));
        OPEN_CK(d0, cudaMalloc((void **)&g->d_seg, 16 * (size_t)g->max_seg));
        OPEN_CK(d0, cudaMalloc((void **)&g->d_totals, 2 * sizeof(uint64_t)));
        for (int i = 0; i <= AURP_GPU_STAGES; i++) OPEN_CK(d0, cudaEventCreate(&g->ev[i]));
        for (int i = 1; i < ndevices; i++) {
            int can = 0;
            if (cudaDeviceCanAccessPeer(&can, d0, devices[i]) == cudaSuccess && can) {
                cudaError_t rc = cudaDeviceEnablePeerAccess(devices[i], 0);
                if (rc != cudaSuccess && rc != cudaErrorPeerAccessAlreadyEnabled)
                    OPEN_CK(d0, rc);
                cudaGetLastError();
            }
        }
        OPEN_CK(d0, cudaHostAlloc((void **)&g->h_in, 2 * g->max_px, cudaHostAllocPortable));
        OPEN_CK(d0, cudaHostAlloc((void **)&g->h_hist, 4 * (size_t)AURP_GPU_HIST_BINS, cudaHostAllocPortable));
        OPEN_CK(d0, cudaHostAlloc((void **)&g->h_range, 8 * (2 + (size_t)AURP_GPU_SLICE_CAP),
                                  cudaHostAllocPortable));
        OPEN_CK(d0, cudaHostAlloc((void **)&g->h_table, 4 * (2 * (size_t)AURP_GPU_HIST_BINS + 4),
                                  cudaHostAllocPortable));
        OPEN_CK(d0, cudaHostAlloc((void **)&g->h_totals, 2 * sizeof(uint64_t), cudaHostAllocPortable));
        OPEN_CK(d0, cudaHostAlloc((void **)&g->h_body, g->body_cap, cudaHostAllocPortable));
    }
    g->hist64 = (uint64_t *)malloc(sizeof(uint64_t) * AURP_GPU_HIST_BINS);
    if (!g->hist64) {
        st = aurp_fail(err, AURP_ERR_NOMEM, "gpu: out of memory");
        goto fail_open;
    }
    return AURP_OK;
fail_open:
    aurp_gpu_close(g);
    *out = NULL;
    return st;
#undef OPEN_CK
}

extern "C" uint8_t *aurp_gpu_host_buffer(aurp_gpu *g, size_t *cap)
{
    if (cap) *cap = g ? 2 * g->max_px : 0;
    return g ? g->h_in : NULL;
}

extern "C" int aurp_gpu_has_profile(int profile)
{
    return profile == AURP_PROFILE_PAPER || profile == AURP_PROFILE_LSMIX;
}

static aurp_status check_params(const aurp_params *p, aurp_error *err)
{
    if (!p) return aurp_fail(err, AURP_ERR_PARAM, "gpu: no parameters");
    if (p->profile == AURP_PROFILE_LSMIX) {
        if (p->order < 1 || p->order > LSX_MAX_K)
            return aurp_fail(err, AURP_ERR_PARAM, "gpu: lsmix: N=%d spectral lags outside 1..%d", p->order,
                             LSX_MAX_K);
        if (p->equations < 1 || p->equations > LSX_MAX_M || !(p->equations & 1))
            return aurp_fail(err, AURP_ERR_PARAM, "gpu: lsmix: M=%d window columns not odd in 1..%d",
                             p->equations, LSX_MAX_M);
        return AURP_OK;
    }
    if (p->profile != AURP_PROFILE_PAPER)
        return aurp_fail(err, AURP_ERR_PARAM, "gpu: profile %d not supported (1 paper, 2 lsmix)", p->profile);
    if (p->order < 1 || p->order > AURP_MAX_ORDER)
        return aurp_fail(err, AURP_ERR_PARAM, "gpu: order N=%d outside 1..%d", p->order, AURP_MAX_ORDER);
    if (p->equations < 1 || p->equations > AURP_MAX_EQUATIONS)
        return aurp_fail(err, AURP_ERR_PARAM, "gpu: equations M=%d outside 1..%d", p->equations,
                    AURP_MAX_EQUATIONS);
    if (p->threshold < 0) return aurp_fail(err, AURP_ERR_PARAM, "gpu: threshold T=%d < 0", p->threshold);
    return AURP_OK;
}

/* After a profiled frame: each stage's device time from its events. */
static void read_stage_times(aurp_gpu *g)
{
    for (int i = 0; i < AURP_GPU_STAGES; i++) {
        float ms = 0;
        cudaEventElapsedTime(&ms, g->ev[i], g->ev[i + 1]);
        g->stage_ms[i] = ms;
    }
}

/* The lsmix column split: device g > 0 unpacks the frame, makes the column
 * means and solves the LS of its band [c0, c1) (its training windows reach
 * M/2 columns to each side, read from its own copy of the frame) of the
 * trainings device 0 solves for this frame (both, or forgetting 2's alone
 * where pipeline 2 waits for the choice), and sends the band to device 0's
 * LS planes; device 0 waits for every band before the stages that read
 * them. */
typedef struct {
    aurp_gpu *g;
    uint32_t W, H;
    int nband; /* devices 0..nband-1 */
    lsx_params par[2];
} lsx_split;

/* The devices the lsmix column split uses for a frame W columns wide
 * (lsmix_split.h: as many as its LS blocks need passes of device 0's SMs;
 * a 1024-wide frame stays on device 0 of a 132-SM card, a 2112-wide one
 * goes to two), or every device where the tests force it. */
static int lsx_split_devices(const aurp_gpu *g, uint32_t W)
{
    return g->lsx_split_all ? g->ndev : lsx_split_count(W, g->dev[0].sms, g->ndev);
}

static cudaError_t lsx_other_bands(void *arg, double *const *ls, int nls, cudaStream_t st0)
{
    lsx_split *sp = (lsx_split *)arg;
    aurp_gpu *g = sp->g;
    const uint32_t W = sp->W, H = sp->H;
    const size_t px = (size_t)W * H;
    cudaError_t rc = cudaSuccess;
    for (int i = 1; i < sp->nband && rc == cudaSuccess; i++) {
        struct gpu_device *d = &g->dev[i];
        uint32_t c0, c1;
        band_of(W, i, sp->nband, &c0, &c1);
        if (c1 <= c0) continue;
        const size_t bw = c1 - c0;
        if ((rc = cudaSetDevice(d->ordinal)) != cudaSuccess) break;
        if (d->lsx_px < g->max_px) {
            cudaFree(d->lsx_cm);
            cudaFree(d->lsx_band);
            d->lsx_cm = NULL, d->lsx_band = NULL, d->lsx_px = 0;
            /* the column means, then the weighted training's row minima (a word a row) */
            if ((rc = cudaMalloc((void **)&d->lsx_cm, 10 * g->max_px)) != cudaSuccess) break;
            if ((rc = cudaMalloc((void **)&d->lsx_band, 16 * g->max_px)) != cudaSuccess) break;
            d->lsx_px = g->max_px;
        }
        double *band[2] = {d->lsx_band, d->lsx_band + H * bw};
        rc = cudaMemcpyAsync(d->be, g->h_in, 2 * px, cudaMemcpyHostToDevice, d->stream);
        if (rc == cudaSuccess) rc = gpu_unpack(d->be, d->x, px, d->stream);
        if (rc == cudaSuccess) rc = lsx_gpu_column_means(d->x, W, H, d->lsx_cm, d->lsx_cm + px, d->stream);
        if (rc == cudaSuccess)
            rc = lsx_gpu_ls_predict(d->x, d->lsx_cm, d->lsx_cm + px, W, H, c0, c1, sp->par, nls, band, bw, c0,
                                    (uint16_t *)(d->lsx_cm + 2 * g->max_px), d->stream);
        for (int l = 0; l < nls && rc == cudaSuccess; l++) {
            cudaMemcpy3DPeerParms cp;
            memset(&cp, 0, sizeof cp);
            cp.srcPtr = make_cudaPitchedPtr(band[l], 8 * bw, 8 * bw, H);
            cp.srcDevice = d->ordinal;
            cp.dstPtr = make_cudaPitchedPtr(ls[l] + c0, 8 * (size_t)W, 8 * bw, H);
            cp.dstDevice = g->dev[0].ordinal;
            cp.extent = make_cudaExtent(8 * bw, H, 1);
            rc = cudaMemcpy3DPeerAsync(&cp, d->stream);
        }
        if (rc == cudaSuccess) rc = cudaEventRecord(d->band_done, d->stream);
    }
    cudaError_t rs = cudaSetDevice(g->dev[0].ordinal);
    if (rc != cudaSuccess) return rc;
    if (rs != cudaSuccess) return rs;
    for (int i = 1; i < sp->nband; i++) {
        uint32_t c0, c1;
        band_of(W, i, sp->nband, &c0, &c1);
        if (c1 > c0 && (rc = cudaStreamWaitEvent(st0, g->dev[i].band_done, 0)) != cudaSuccess) return rc;
    }
    return cudaSuccess;
}

/* The lsmix profile: the frame to device 0, which does every stage
 * (lsmix_encoder.cu) but the LS of the other devices' bands, where the
 * frame is split (lsx_split_devices). */
static aurp_status encode_lsmix(aurp_gpu *g, uint32_t W, uint32_t H, const aurp_params *p, uint8_t *out,
                                size_t cap, size_t *out_len, aurp_error *err)
{
    struct gpu_device *d = &g->dev[0];
    const size_t px = (size_t)W * H;
    CK(d->ordinal, cudaSetDevice(d->ordinal));
    MARK(0);
    CK(d->ordinal, cudaMemcpyAsync(d->be, g->h_in, 2 * px, cudaMemcpyHostToDevice, d->stream));
    CK(d->ordinal, gpu_unpack(d->be, d->x, px, d->stream));
    const int nband = lsx_split_devices(g, W);
    uint32_t c0, c1;
    band_of(W, 0, nband, &c0, &c1);
    lsx_split sp = {g, W, H, nband, {{p->order, p->equations, LSX_FORGET, LSX_RIDGE, 0},
                                     {p->order, p->equations, LSX_ROW_FORGET, LSX_RIDGE, LSX_WRITE_SET == 3}}};
    aurp_status st = lsx_gpu_encode(&g->lsx, g->label, d->stream, g->profile ? g->ev : NULL, d->x, W, H,
                                    p->order, p->equations, c1, nband > 1 ? lsx_other_bands : NULL, &sp, out,
                                    cap, out_len, err);
    if (st == AURP_OK && g->profile) {
        read_stage_times(g);
        g->host_plan_ms = 0;
    }
    return st;
}

extern "C" aurp_status aurp_gpu_encode(aurp_gpu *g, const uint8_t *be16, uint32_t W, uint32_t H,
                                       const aurp_params *p, uint8_t *out, size_t cap,
                                       size_t *out_len, aurp_error *err)
{
    *out_len = 0;
    if (!g) return aurp_fail(err, AURP_ERR_PARAM, "gpu: no handle");
    aurp_status st = check_params(p, err);
    if (st != AURP_OK) return st;
    if (W < 1 || H < 1 || W > g->max_w || H > g->max_h)
        return aurp_fail(err, AURP_ERR_PARAM, "%s: frame %ux%u outside the opened limit 1..%ux1..%u",
                    g->label, W, H, g->max_w, g->max_h);
    const size_t px = (size_t)W * H;
    const int N = p->order, M = p->equations;
    const int G = g->ndev;
    const int d0 = g->dev[0].ordinal;
    if (be16 != g->h_in) memcpy(g->h_in, be16, 2 * px);
    if (p->profile == AURP_PROFILE_LSMIX) return encode_lsmix(g, W, H, p, out, cap, out_len, err);

    /* every device: its band of residuals */
    for (int i = 0; i < G; i++) {
        struct gpu_device *d = &g->dev[i];
        uint32_t c0, c1;
        band_of(W, i, G, &c0, &c1);
        CK(d->ordinal, cudaSetDevice(d->ordinal));
        if (i == 0) MARK(0);
        if (c1 > c0) {
            uint32_t lo = c0 > (uint32_t)(N + M - 1) ? c0 - (uint32_t)(N + M - 1) : 0;
            size_t need = (size_t)(N + 1) * H * (c1 - lo);
            if (need > d->lag_cap || (i > 0 && (size_t)H * (c1 - c0) > d->band_cap))
                return aurp_fail(err, AURP_ERR_BACKEND, "gpu:%d: band buffers too small (internal)", d->ordinal);
            CK(d->ordinal, cudaMemcpyAsync(d->be, g->h_in, 2 * px, cudaMemcpyHostToDevice, d->stream));
            if (i == 0) MARK(1);
            CK(d->ordinal, gpu_unpack(d->be, d->x, px, d->stream));
            CK(d->ordinal, gpu_lag_sums(d->x, W, H, lo, c1, N, d->lag, d->stream));
            if (i == 0) MARK(2);
            if (i == 0) {
                CK(d->ordinal, gpu_predict(d->x, W, H, d->lag, lo, c0, c1, N, M, g->d_e, W, 0, d->stream));
            } else {
                CK(d->ordinal, gpu_predict(d->x, W, H, d->lag, lo, c0, c1, N, M, d->e_band, c1 - c0, c0,
                                           d->stream));
                cudaMemcpy3DPeerParms cp;
                memset(&cp, 0, sizeof cp);
                cp.srcPtr = make_cudaPitchedPtr(d->e_band, 4 * (size_t)(c1 - c0), 4 * (size_t)(c1 - c0), H);
                cp.srcDevice = d->ordinal;
                cp.dstPtr = make_cudaPitchedPtr(g->d_e + c0, 4 * (size_t)W, 4 * (size_t)(c1 - c0), H);
                cp.dstDevice = d0;
                cp.extent = make_cudaExtent(4 * (size_t)(c1 - c0), H, 1);
                CK(d->ordinal, cudaMemcpy3DPeerAsync(&cp, d->stream));
            }
        } else if (i == 0) {
            /* device 0 always holds the frame: escapes are pixel values */
            CK(d->ordinal, cudaMemcpyAsync(d->be, g->h_in, 2 * px, cudaMemcpyHostToDevice, d->stream));
            CK(d->ordinal, gpu_unpack(d->be, d->x, px, d->stream));
        }
        CK(d->ordinal, cudaEventRecord(d->band_done, d->stream));
    }

    /* device 0: histogram, T-/T+ and the bins between them -> plan on the host */
    struct gpu_device *z = &g->dev[0];
    CK(d0, cudaSetDevice(d0));
    for (int i = 1; i < G; i++) CK(d0, cudaStreamWaitEvent(z->stream, g->dev[i].band_done, 0));
    MARK(3);
    const uint32_t tq = p->threshold > 1 ? (uint32_t)p->threshold : 1u; /* T' */
    CK(d0, cudaMemsetAsync(g->d_hist, 0, 4 * (size_t)AURP_GPU_HIST_BINS, z->stream));
    CK(d0, gpu_histogram(g->d_e, px, g->d_hist, z->stream));
    CK(d0, gpu_hist_range(g->d_hist, tq, g->d_range, z->stream));
    CK(d0, cudaMemcpyAsync(g->h_range, g->d_range, 8 * (2 + (size_t)AURP_GPU_SLICE_CAP),
                           cudaMemcpyDeviceToHost, z->stream));
    MARK(4);
    CK(d0, cudaStreamSynchronize(z->stream));
    struct timespec tp0, tp1;
    clock_gettime(CLOCK_MONOTONIC, &tp0);
    const int64_t r_lo = (int64_t)g->h_range[0], r_hi = (int64_t)g->h_range[1];
    const uint32_t r_n = r_hi >= r_lo ? (uint32_t)(r_hi - r_lo + 1) : 0;
    const uint64_t *slice = g->h_range + 2;
    if (r_n > AURP_GPU_SLICE_CAP) {
        /* a wide coded range (rare: tiny T on a noisy frame): fetch it all */
        CK(d0, cudaMemcpyAsync(g->h_hist, g->d_hist + r_lo, 4 * (size_t)r_n, cudaMemcpyDeviceToHost,
                               z->stream));
        CK(d0, cudaStreamSynchronize(z->stream));
        for (uint32_t i = 0; i < r_n; i++) g->hist64[i] = g->h_hist[i];
        slice = g->hist64;
    }
    aurp_plan plan;
    st = aurp_plan_build_range(slice, (int32_t)(r_n ? r_lo : 0) - AURP_RESIDUAL_MAX, r_n, px,
                               p->threshold, &plan);
    if (st != AURP_OK) return aurp_fail(err, st, "%s: cannot build the coding plan", g->label);

    /* device 0: segments, escapes -> host */
    clock_gettime(CLOCK_MONOTONIC, &tp1);
    g->host_plan_ms = (double)(tp1.tv_sec - tp0.tv_sec) * 1e3 + (double)(tp1.tv_nsec - tp0.tv_nsec) * 1e-6;
    memcpy(g->h_table, plan.freq, 4 * (size_t)plan.nsym);
    memcpy(g->h_table + plan.nsym, plan.cum, 4 * ((size_t)plan.nsym + 1));
    const uint32_t nseg = (uint32_t)nseg_of(px);
    gpu_code_args a;
    memset(&a, 0, sizeof a);
    a.e = g->d_e;
    a.x = z->x;
    a.count = px;
    a.t_lo = plan.t_lo;
    a.t_hi = plan.t_hi;
    a.esc_sym = plan.nsym - 1;
    a.sym_tab = g->d_symtab;
    a.prob_bits = AURP_PROB_BITS;
    a.seg_log2 = AURP_SEG_LOG2;
    a.nseg = nseg;
    a.scratch = g->d_scratch;
    a.slot = g->slot;
    a.seg_len = g->d_seg;
    a.seg_esc = g->d_seg + g->max_seg;
    a.seg_off = g->d_seg + 2 * (size_t)g->max_seg;
    a.esc_off = g->d_seg + 3 * (size_t)g->max_seg;
    a.totals = g->d_totals;
    a.body = g->d_body;
    cudaError_t rc = cudaMemcpyAsync(g->d_table, g->h_table, 4 * (2 * (size_t)plan.nsym + 1),
                                     cudaMemcpyHostToDevice, z->stream);
    MARK(5);
    if (rc == cudaSuccess)
        rc = gpu_code_segments(&a, g->d_table, g->d_table + plan.nsym, plan.nsym, g->d_symtab, z->stream);
    MARK(6);
    if (rc == cudaSuccess)
        rc = cudaMemcpyAsync(g->h_totals, g->d_totals, 2 * sizeof(uint64_t), cudaMemcpyDeviceToHost, z->stream);
    if (rc == cudaSuccess) rc = cudaStreamSynchronize(z->stream);
    size_t seg_bytes = rc == cudaSuccess ? g->h_totals[0] : 0;
    size_t body = 4 * (size_t)nseg + seg_bytes + 2 * (rc == cudaSuccess ? g->h_totals[1] : 0);
    if (rc == cudaSuccess && (g->h_totals[1] != plan.escapes || body > g->body_cap)) {
        aurp_plan_free(&plan);
        return aurp_fail(err, AURP_ERR_BACKEND, "%s: segment coding disagrees with the plan (internal)", g->label);
    }
    if (rc == cudaSuccess) rc = cudaMemcpyAsync(g->h_body, g->d_body, body, cudaMemcpyDeviceToHost, z->stream);
    MARK(7);
    if (rc == cudaSuccess) rc = cudaStreamSynchronize(z->stream);
    if (rc == cudaSuccess && g->profile) read_stage_times(g);
    if (rc != cudaSuccess) {
        aurp_plan_free(&plan);
        return aurp_fail(err, AURP_ERR_BACKEND, "gpu:%d: segment coding: %s", d0, cudaGetErrorString(rc));
    }
    /* the escapes follow the segments at any byte offset: move them to an
     * even one for the uint16_t view (the body buffer has room) */
    uint8_t *esc = g->h_body + 4 * (size_t)nseg + seg_bytes;
    if (seg_bytes & 1) {
        memmove(esc + 1, esc, 2 * (size_t)plan.escapes);
        esc++;
    }
    st = aurp_stream_write(out, cap, out_len, W, H, p, &plan, (const uint32_t *)g->h_body, nseg,
                           g->h_body + 4 * (size_t)nseg, (const uint16_t *)esc);
    aurp_plan_free(&plan);
    if (st != AURP_OK) return aurp_fail(err, st, "%s: output buffer of %zu bytes too small", g->label, cap);
    return AURP_OK;
}

/* Fault injection for the daemon's GPU-failure path, which no healthy
 * device exercises: AURP_GPU_INJECT_FAULTS=FIRST:COUNT makes encoder calls
 * FIRST .. FIRST+COUNT-1 (1-based, counted over the process) fail as a
 * device error would, before any work.  Unset (always, in operation):
 * nothing changes. */
static bool injected_fault(aurp_gpu *g, aurp_error *err)
{
    static long first = -1, count = 0;
    static unsigned long calls = 0;
    long f = __atomic_load_n(&first, __ATOMIC_ACQUIRE);
    if (f == -1) {
        const char *s = getenv("AURP_GPU_INJECT_FAULTS");
        long a = 0, b = 0;
        if (!s || sscanf(s, "%ld:%ld", &a, &b) != 2 || a < 1 || b < 1) a = 0, b = 0;
        __atomic_store_n(&count, b, __ATOMIC_RELAXED);
        __atomic_store_n(&first, a, __ATOMIC_RELEASE);
        f = a;
    }
    if (f == 0) return false;
    long n = (long)__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
    if (n < f || n >= f + __atomic_load_n(&count, __ATOMIC_RELAXED)) return false;
    aurp_fail(err, AURP_ERR_BACKEND, "%s: injected fault (AURP_GPU_INJECT_FAULTS, call %ld)", g->label, n);
    return true;
}

static aurp_status encode_cb(void *ctx, const uint8_t *be16, uint32_t w, uint32_t h, const aurp_params *p,
                             uint8_t *out, size_t cap, size_t *len, aurp_error *err)
{
    if (injected_fault((aurp_gpu *)ctx, err)) {
        *len = 0;
        return AURP_ERR_BACKEND;
    }
    return aurp_gpu_encode((aurp_gpu *)ctx, be16, w, h, p, out, cap, len, err);
}

extern "C" aurp_image_encoder aurp_gpu_encoder(aurp_gpu *g)
{
    aurp_image_encoder e = {encode_cb, g, g ? g->label : "gpu"};
    return e;
}

extern "C" void aurp_gpu_profile(aurp_gpu *g, int on) { if (g) g->profile = on; }

extern "C" int aurp_gpu_stage_times(const aurp_gpu *g, double *ms, int n)
{
    int k = n < AURP_GPU_STAGES ? n : AURP_GPU_STAGES;
    for (int i = 0; i < k; i++) ms[i] = g->stage_ms[i];
    if (n > AURP_GPU_STAGES) ms[AURP_GPU_STAGES] = g->host_plan_ms;
    return k;
}

extern "C" const char *aurp_gpu_label(const aurp_gpu *g) { return g ? g->label : "gpu:none"; }

extern "C" void aurp_gpu_close(aurp_gpu *g)
{
    if (!g) return;
    for (int i = 0; i < g->ndev; i++) {
        struct gpu_device *d = &g->dev[i];
        if (cudaSetDevice(d->ordinal) != cudaSuccess) continue;
        if (d->stream) cudaStreamSynchronize(d->stream);
        cudaFree(d->be);
        cudaFree(d->x);
        cudaFree(d->lag);
        cudaFree(d->e_band);
        cudaFree(d->lsx_cm);
        cudaFree(d->lsx_band);
        if (d->band_done) cudaEventDestroy(d->band_done);
        if (d->stream) cudaStreamDestroy(d->stream);
        if (i == 0) {
            lsx_gpu_free(g->lsx);
            for (int k = 0; k <= AURP_GPU_STAGES; k++)
                if (g->ev[k]) cudaEventDestroy(g->ev[k]);
            cudaFree(g->d_e);
            cudaFree(g->d_hist);
            cudaFree(g->d_table);
            cudaFree(g->d_range);
            cudaFree(g->d_symtab);
            cudaFree(g->d_scratch);
            cudaFree(g->d_body);
            cudaFree(g->d_seg);
            cudaFree(g->d_totals);
            cudaFreeHost(g->h_in);
            cudaFreeHost(g->h_hist);
            cudaFreeHost(g->h_range);
            cudaFreeHost(g->h_table);
            cudaFreeHost(g->h_totals);
            cudaFreeHost(g->h_body);
        }
    }
    cudaGetLastError();
    free(g->hist64);
    free(g);
}

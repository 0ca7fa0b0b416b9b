/* The GPU backend when the build has no CUDA: every entry point says so and
 * the callers fall back to the CPU encoder. */
#include "aurp_gpu.h"

#include <stdio.h>

static const char no_cuda[] = "built without CUDA (nvcc not found at build time)";

int aurp_gpu_count(char *why, size_t why_len)
{
    if (why && why_len) snprintf(why, why_len, "%s", no_cuda);
    return 0;
}

aurp_status aurp_gpu_open(const int *devices, int ndevices, uint32_t max_width,
                          uint32_t max_height, aurp_gpu **out, aurp_error *err)
{
    (void)devices, (void)ndevices, (void)max_width, (void)max_height;
    *out = NULL;
    if (err) snprintf(err->msg, sizeof err->msg, "%s", no_cuda);
    return AURP_ERR_BACKEND;
}

aurp_status aurp_gpu_encode(aurp_gpu *g, const uint8_t *be16, uint32_t width, uint32_t height,
                            const aurp_params *p, uint8_t *out, size_t cap, size_t *out_len,
                            aurp_error *err)
{
    (void)g, (void)be16, (void)width, (void)height, (void)p, (void)out, (void)cap;
    *out_len = 0;
    if (err) snprintf(err->msg, sizeof err->msg, "%s", no_cuda);
    return AURP_ERR_BACKEND;
}

int aurp_gpu_has_profile(int profile) { return profile == AURP_PROFILE_PAPER || profile == AURP_PROFILE_LSMIX; }

uint8_t *aurp_gpu_host_buffer(aurp_gpu *g, size_t *cap)
{
    (void)g;
    if (cap) *cap = 0;
    return NULL;
}

static aurp_status encode_cb(void *ctx, const uint8_t *be16, uint32_t w, uint32_t h,
                             const aurp_params *p, uint8_t *out, size_t cap, size_t *len,
                             aurp_error *err)
{
    return aurp_gpu_encode(ctx, be16, w, h, p, out, cap, len, err);
}

aurp_image_encoder aurp_gpu_encoder(aurp_gpu *g)
{
    aurp_image_encoder e = {encode_cb, g, "gpu"};
    return e;
}

void aurp_gpu_profile(aurp_gpu *g, int on) { (void)g, (void)on; }

int aurp_gpu_stage_times(const aurp_gpu *g, double *ms, int n)
{
    (void)g, (void)ms, (void)n;
    return 0;
}

const char *aurp_gpu_label(const aurp_gpu *g)
{
    (void)g;
    return "gpu:none";
}

void aurp_gpu_close(aurp_gpu *g) { (void)g; }

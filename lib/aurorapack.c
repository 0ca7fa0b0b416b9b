/* libaurorapack's own entry points: the frame layer (FITS layout + core)
 * behind an API that does not expose its structures. */
#include "aurorapack.h"

#include <stdio.h>
#include <stdlib.h>

#include "frame.h"

static aurp_status fail(aurp_error *err, aurp_status st, const char *what, const char *why)
{
    /* the reason may be cut to fit: it is a message, not data */
    if (err) snprintf(err->msg, sizeof err->msg, "%s%.200s", what, why);
    return st;
}

#define STR2(x) #x
#define STR(x) STR2(x)

const char *aurorapack_version(void)
{
    return STR(AURORAPACK_VERSION_MAJOR) "." STR(AURORAPACK_VERSION_MINOR) "." STR(
        AURORAPACK_VERSION_PATCH);
}

aurp_status aurorapack_pack(const uint8_t *file, size_t len, const aurp_params *params,
                            int threads, int any, uint8_t **out, size_t *out_len,
                            aurorapack_layout *layout, aurp_error *err)
{
    *out = NULL;
    *out_len = 0;
    if (!file && len) return fail(err, AURP_ERR_PARAM, "no input", "");
    aurp_params defaults;
    if (!params) {
        aurp_params_default(&defaults);
        params = &defaults;
    }
    /* frame_layout is large (64 regions): not on the caller's thread stack */
    frame_layout *fl = malloc(sizeof *fl);
    if (!fl) return fail(err, AURP_ERR_NOMEM, "out of memory", "");
    frame_layout_of(file ? file : (const uint8_t *)"", len, fl);
    if (layout) {
        layout->kind = (int)fl->kind;
        layout->nimages = fl->kind == FRAME_FITS_IMAGE ? fl->nregions : 0;
        snprintf(layout->why, sizeof layout->why, "%s", fl->why);
    }
    aurp_status st;
    if (fl->kind == FRAME_NOT_FITS && !any)
        st = fail(err, AURP_ERR_PARAM, "not a FITS file: ", fl->why);
    else {
        aurp_error local = {{0}};
        st = frame_pack(file ? file : (const uint8_t *)"", len, fl, params, NULL,
                        threads < 1 ? 1 : threads, out, out_len, err ? err : &local);
    }
    free(fl);
    return st;
}

aurp_status aurorapack_unpack(const uint8_t *packed, size_t len, int threads,
                              uint64_t max_output, uint8_t **out, size_t *out_len,
                              aurp_error *err)
{
    aurp_error local = {{0}};
    return frame_unpack_limited(packed, len, threads, max_output, out, out_len,
                                err ? err : &local);
}

void aurorapack_free(void *p) { free(p); }

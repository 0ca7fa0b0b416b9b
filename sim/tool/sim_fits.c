/* sim_fits_write: a simulated frame as a FITS file, through cfitsio. */
#include "sim_fits.h"

#include <errno.h>
#include <fcntl.h>
#include <fitsio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int fail(int status, const char *path, const char *what, char *err, size_t err_len)
{
    char msg[FLEN_STATUS];
    fits_get_errstatus(status, msg);
    snprintf(err, err_len, "%s: %s: %s (cfitsio status %d)", path, what, msg, status);
    fits_clear_errmsg();
    return -1;
}

int sim_fits_write(const char *path, uint32_t width, uint32_t height, const uint16_t *pixels,
                   const sim_fits_meta *meta, char *err, size_t err_len)
{
    char bang[4096];
    snprintf(bang, sizeof bang, "!%s", path); /* "!": replace an existing file */
    fitsfile *f = NULL;
    int status = 0;
    if (fits_create_file(&f, bang, &status)) return fail(status, path, "cannot create", err, err_len);
    long naxes[2] = {(long)width, (long)height};
    fits_create_img(f, meta->bitpix == 32 ? LONG_IMG : USHORT_IMG, 2, naxes, &status);

    const sim_options *o = meta->opt;
    char date[32];
    struct tm tm;
    gmtime_r(&meta->capture, &tm);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
    double exptime = o->exposure_s, cdelt = (o->lambda_max_nm - o->lambda_min_nm) /
                                            (width > 1 ? width - 1 : 1);
    double crval = o->lambda_min_nm, crpix = 1.0, gain = o->gain_e_per_adu,
           rdnoise = o->read_noise_adu, lat = 69.37, lon = 76.37, ccdtemp = -60.0;
    long long frameidx = (long long)meta->frame_index, seed = (long long)meta->seed;
    fits_write_key(f, TSTRING, "DATE-OBS", date, "UTC start of exposure", &status);
    fits_write_key(f, TDOUBLE, "EXPTIME", &exptime, "[s] exposure time", &status);
    fits_write_key(f, TSTRING, "INSTRUME", "AURORASIM", "simulated auroral spectrograph", &status);
    fits_write_key(f, TSTRING, "TELESCOP", "all-sky spectrograph", "meridian slit", &status);
    fits_write_key(f, TSTRING, "OBSERVAT", "Polar station (simulated)", NULL, &status);
    fits_write_key(f, TDOUBLE, "SITELAT", &lat, "[deg] geographic latitude", &status);
    fits_write_key(f, TDOUBLE, "SITELONG", &lon, "[deg] geographic longitude", &status);
    /* an echelle's wavelength is not linear in the column: no WCS for it */
    int echelle = o->kind == SIM_KIND_ECHELLE || o->kind == SIM_KIND_ECHELLE_ARC;
    if (!echelle) {
        fits_write_key(f, TSTRING, "CTYPE1", "WAVE", "NAXIS1 is wavelength", &status);
        fits_write_key(f, TSTRING, "CUNIT1", "nm", NULL, &status);
        fits_write_key(f, TDOUBLE, "CRVAL1", &crval, "[nm] wavelength at CRPIX1", &status);
        fits_write_key(f, TDOUBLE, "CRPIX1", &crpix, NULL, &status);
        fits_write_key(f, TDOUBLE, "CDELT1", &cdelt, "[nm] per column", &status);
        fits_write_key(f, TSTRING, "CTYPE2", "SLIT", "NAXIS2 is position along the slit", &status);
    }
    /* the default kind's header stays as it always was */
    if (o->kind != SIM_KIND_AURORA) {
        double level = o->level;
        fits_write_key(f, TSTRING, "SIMKIND", (char *)sim_kind_name(o->kind), "what the simulator drew",
                       &status);
        fits_write_key(f, TDOUBLE, "SIMLEVEL", &level, "brightness of the scene", &status);
        uint32_t ov = sim_overscan_columns(width, o);
        if (ov) {
            char sec[80];
            snprintf(sec, sizeof sec, "[1:%u,1:%u]", width - ov, height);
            fits_write_key(f, TSTRING, "DATASEC", sec, "exposed pixels", &status);
            snprintf(sec, sizeof sec, "[%u:%u,1:%u]", width - ov + 1, width, height);
            fits_write_key(f, TSTRING, "BIASSEC", sec, "overscan", &status);
        }
    }
    fits_write_key(f, TSTRING, "BUNIT", "ADU", NULL, &status);
    fits_write_key(f, TDOUBLE, "GAIN", &gain, "[e-/ADU]", &status);
    fits_write_key(f, TDOUBLE, "RDNOISE", &rdnoise, "[ADU] read noise", &status);
    fits_write_key(f, TDOUBLE, "CCD-TEMP", &ccdtemp, "[C] detector temperature", &status);
    fits_write_key(f, TLONGLONG, "FRAMEIDX", &frameidx, "frame index of the simulator", &status);
    fits_write_key(f, TLONGLONG, "SIMSEED", &seed, "simulator seed", &status);
    fits_write_key(f, TSTRING, "ORIGIN", "aurorapack aurorasim", NULL, &status);
    if (status) {
        int ignore = 0;
        fits_close_file(f, &ignore);
        return fail(status, path, "cannot write header", err, err_len);
    }
    fits_write_img(f, TUSHORT, 1, (LONGLONG)width * height, (void *)pixels, &status);
    int close_status = 0;
    fits_close_file(f, &close_status);
    if (status || close_status) return fail(status ? status : close_status, path, "cannot write",
                                            err, err_len);
    int fd = open(path, O_RDONLY);
    if (fd < 0 || fsync(fd) != 0) {
        snprintf(err, err_len, "%s: cannot fsync: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

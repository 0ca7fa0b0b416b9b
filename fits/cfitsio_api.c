/* cfitsio opened on first use (cfitsio_api.h says why). */
#include "cfitsio_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef AURP_CFITSIO_SONAME
#define AURP_CFITSIO_SONAME "libcfitsio.so"
#endif

static pthread_once_t once = PTHREAD_ONCE_INIT;
static cfitsio_api api;
static int loaded;
static char failure[512];

static void *symbol(void *lib, const char *name, const char *path)
{
    void *f = dlsym(lib, name);
    if (!f && !failure[0]) snprintf(failure, sizeof failure, "%s has no %s", path, name);
    return f;
}

static void load(void)
{
    const char *path = getenv("AURP_CFITSIO_LIB");
    if (!path || !*path) path = AURP_CFITSIO_SONAME;
    /* never closed: the functions are used until the process ends */
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        snprintf(failure, sizeof failure, "cannot load cfitsio: %s", e ? e : path);
        return;
    }
    api.open_memfile = (__typeof__(api.open_memfile))symbol(lib, "ffomem", path);
    api.close_file = (__typeof__(api.close_file))symbol(lib, "ffclos", path);
    api.get_errstatus = (__typeof__(api.get_errstatus))symbol(lib, "ffgerr", path);
    api.clear_errmsg = (__typeof__(api.clear_errmsg))symbol(lib, "ffcmsg", path);
    api.read_key_str = (__typeof__(api.read_key_str))symbol(lib, "ffgkys", path);
    api.read_key_lnglng = (__typeof__(api.read_key_lnglng))symbol(lib, "ffgkyjj", path);
    api.get_hduaddrll = (__typeof__(api.get_hduaddrll))symbol(lib, "ffghadll", path);
    api.movrel_hdu = (__typeof__(api.movrel_hdu))symbol(lib, "ffmrhd", path);
    loaded = !failure[0];
}

const cfitsio_api *cfitsio(char *why, size_t why_len)
{
    pthread_once(&once, load);
    if (loaded) return &api;
    if (why && why_len) snprintf(why, why_len, "%s", failure);
    return NULL;
}

#include "spool.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int by_name(const void *a, const void *b)
{
    return strcmp(((const spool_file *)a)->name, ((const spool_file *)b)->name);
}

int spool_scan(const char *dir, const char *suffix, int want_list, spool_summary *s)
{
    memset(s, 0, sizeof *s);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return -1;
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return -1;
    }
    size_t cap = 0, sl = suffix ? strlen(suffix) : 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t nl = strlen(de->d_name);
        if (de->d_name[0] == '.' || nl >= sizeof s->oldest) continue;
        if (sl && (nl < sl || strcmp(de->d_name + nl - sl, suffix) != 0)) continue;
        struct stat st;
        if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
        s->files++;
        s->bytes += (uint64_t)st.st_size;
        if (!s->oldest_mtime_s || st.st_mtime < s->oldest_mtime_s) {
            s->oldest_mtime_s = st.st_mtime;
            memcpy(s->oldest, de->d_name, nl + 1);
        }
        if (!want_list) continue;
        if ((size_t)s->files > cap) {
            cap = cap ? cap * 2 : 256;
            spool_file *nv = realloc(s->list, cap * sizeof *nv);
            if (!nv) abort();
            s->list = nv;
        }
        spool_file *f = &s->list[s->files - 1];
        memcpy(f->name, de->d_name, nl + 1);
        f->size = (uint64_t)st.st_size;
        f->mtime_s = st.st_mtime;
    }
    closedir(d);
    if (s->list) qsort(s->list, (size_t)s->files, sizeof *s->list, by_name);
    return 0;
}

void spool_free(spool_summary *s)
{
    free(s->list);
    s->list = NULL;
}

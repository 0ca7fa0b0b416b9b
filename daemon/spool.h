/* What is waiting in a directory: the outbox (packed frames not yet sent:
 * NAME.aurp, with their NAME.sha256 sidecars) or incoming (frames not yet
 * packed).  Read by the daemon for its metrics and by `aurorad --queue`,
 * which needs nothing but the directories. */
#ifndef AURORAD_SPOOL_H
#define AURORAD_SPOOL_H

#include <stdint.h>

typedef struct {
    char name[256];
    uint64_t size;
    int64_t mtime_s;
} spool_file;

typedef struct {
    int files;
    uint64_t bytes;           /* the files' bytes (sidecars not counted) */
    int64_t oldest_mtime_s;   /* 0 when empty */
    char oldest[256];
    spool_file *list;         /* sorted by name (capture order in the outbox); NULL unless asked */
} spool_summary;

/* Counts visible regular files of dir; suffix: only names ending so
 * (".aurp"), NULL for all.  want_list: fill list (free with spool_free).
 * -1 (errno) when dir cannot be listed. */
int spool_scan(const char *dir, const char *suffix, int want_list, spool_summary *s);
void spool_free(spool_summary *s);

#endif

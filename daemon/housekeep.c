#include "housekeep.h"

#include <errno.h>
#include <string.h>

void housekeep_run(housekeep_pass *h)
{
    const aurorad_config *c = &h->cfg;
    retention_rules rules = {c->done_min_free, c->done_max_bytes, c->done_max_age_days * 86400};
    h->retention_ran = c->done_dir[0] && retention_enabled(&rules);
    if (h->retention_ran) {
        h->retention_rc = retention_pass(c->done_dir, &rules, h->now_s, &h->retention);
        h->retention_errno = h->retention_rc ? errno : 0;
    }
    spool_scan(c->outbox_dir, ".aurp", 0, &h->outbox);
    spool_scan(c->incoming_dir, NULL, 0, &h->incoming);
    if (c->done_dir[0]) spool_scan(c->done_dir, NULL, 0, &h->done);
    const char *keys[HOUSEKEEP_DIRS] = {"incoming", "outbox", "done", "quarantine", "state"};
    const char *paths[HOUSEKEEP_DIRS] = {c->incoming_dir, c->outbox_dir, c->done_dir,
                                         c->quarantine_dir, c->state_dir};
    h->dirs = 0;
    for (int i = 0; i < HOUSEKEEP_DIRS; i++) {
        if (!paths[i][0]) continue;
        h->dir_key[h->dirs] = keys[i];
        h->dir_path[h->dirs] = paths[i];
        h->dir_free[h->dirs] = disk_free_bytes(paths[i]);
        h->dirs++;
    }
}

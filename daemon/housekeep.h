/* The periodic look at the station's disks, done off the loop thread
 * (listing a done_dir of months of originals takes a while): retention of
 * the originals, what waits in the outbox and in incoming, free space of
 * every configured directory.  The loop logs and publishes the result
 * (aurorad.c: on_housekeep_done). */
#ifndef AURORAD_HOUSEKEEP_H
#define AURORAD_HOUSEKEEP_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "retention.h"
#include "spool.h"

#define HOUSEKEEP_DIRS 5

typedef struct {
    /* in */
    aurorad_config cfg;
    double now_s;
    /* out */
    bool retention_ran;
    int retention_rc, retention_errno;
    retention_report retention;
    spool_summary outbox, incoming, done;
    const char *dir_key[HOUSEKEEP_DIRS];
    const char *dir_path[HOUSEKEEP_DIRS];
    uint64_t dir_free[HOUSEKEEP_DIRS];
    int dirs;
} housekeep_pass;

/* Runs one pass (any thread); fills the out fields. */
void housekeep_run(housekeep_pass *h);

#endif

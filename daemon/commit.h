/* The transmission queue's commit protocol: how bytes become durable files
 * and how originals are released, so that kill -9 at any instant leaves
 * every frame in the outbox exactly once and no partial file visible.
 *
 *   1. packed bytes -> DIR/.NAME.aurp.tmp-PID, fsync(file)
 *   2. rename to DIR/NAME.aurp, fsync(DIR)          (now durable and visible)
 *   3. original -> done_dir (rename, or copy+fsync+rename across file
 *      systems), fsync both directories; or unlink + fsync(incoming).
 * A restart removes stale .*.tmp-* files; a frame whose NAME.aurp already
 * exists is checked against it and released instead of coded again
 * (worker.c).  Errors return -1 with errno kept and a message naming the
 * file and the reason.
 */
#ifndef AURORAD_COMMIT_H
#define AURORAD_COMMIT_H

#include <stddef.h>
#include <stdint.h>

int commit_fsync_dir(const char *dir, char *err, size_t err_len);

/* Writes DIR/NAME atomically (steps 1-2). */
int commit_write_atomic(const char *dir, const char *name, const void *data, size_t len,
                        char *err, size_t err_len);

/* Moves SRC_DIR/NAME to DST_DIR/DST_NAME durably (rename, or copy when the
 * directories are on different file systems). */
int commit_move(const char *src_dir, const char *name, const char *dst_dir, const char *dst_name,
                char *err, size_t err_len);

/* Releases the original after its packed copy is durable (step 3);
 * done_dir NULL or "" deletes it. */
int commit_release(const char *incoming_dir, const char *name, const char *done_dir, char *err,
                   size_t err_len);

/* Removes stale temporary files (".*.tmp-*") left by a killed process;
 * returns how many. */
int commit_cleanup_temps(const char *dir);

/* Reads a whole file; *data is malloc'd.  errno kept on failure. */
int commit_read_file(const char *path, uint8_t **data, size_t *len, char *err, size_t err_len);

/* Whether errno means the outbox cannot take the file now but may later
 * (full, quota, I/O error, read-only) rather than a problem of the frame. */
int commit_errno_is_transient(int e);

/* "ENOSPC" style name of an errno value, for logs. */
const char *commit_errno_name(int e);

#endif

/* The transmission queue's commit protocol: how bytes become durable files
 * and how originals are released, so that kill -9 at any instant leaves
 * every frame in the outbox exactly once and no partial file visible.
 *
 *   1. packed bytes -> DIR/.tmp-PID-N, fsync(file)  (short: NAME may be NAME_MAX long)
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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "worker.h"

int commit_fsync_dir(const char *dir, char *err, size_t err_len);

/* Writes DIR/NAME atomically (steps 1-2). */
int commit_write_atomic(const char *dir, const char *name, const void *data, size_t len,
                        char *err, size_t err_len);

/* Step 1 alone, made durable as a directory entry too (fsync of DIR), so
 * that a journal entry written next (journal.h) may name it: writes
 * DIR/.tmp-PID-N and returns its name in tmp_name. */
int commit_write_temp(const char *dir, const void *data, size_t len, char *tmp_name,
                      size_t tmp_cap, char *err, size_t err_len);

/* Step 2 alone: renames DIR/TMP_NAME to DIR/NAME and fsyncs DIR.  On
 * failure the temporary file is left for the caller (whether it is still
 * there tells whether the rename happened). */
int commit_rename_into_place(const char *dir, const char *tmp_name, const char *name, char *err,
                             size_t err_len);

/* Moves SRC_DIR/NAME to DST_DIR/DST_NAME durably (rename, or copy when the
 * directories are on different file systems). */
int commit_move(const char *src_dir, const char *name, const char *dst_dir, const char *dst_name,
                char *err, size_t err_len);

/* Releases the original after its packed copy is durable (step 3);
 * done_dir NULL or "" deletes it.  fd is the worker's descriptor of the
 * original (a copy across file systems is made from it), seen what was
 * packed: when the name no longer holds that file, nothing is released and
 * the return is 1 with the reason in err (a file renamed into done_dir
 * that turns out not to be it is put back).  -1 with errno on faults. */
int commit_release(const char *incoming_dir, const char *name, const char *done_dir, int fd,
                   const file_ident *seen, char *err, size_t err_len);

/* Opens DIR/NAME for reading only if it is the regular file seen (same
 * device and inode): never follows a link, never blocks on a FIFO, never
 * opens a device.  Returns the descriptor (blocking again), or -1 with
 * errno: ENOENT gone, ESTALE replaced by another file or not a regular
 * file, else why open failed. */
int commit_open_seen(const char *path, const file_ident *seen, char *err, size_t err_len);

/* Whether PATH still names the file seen and fd's size and mtime are still
 * what was read: 0 yes, 1 no (err says what changed). */
int commit_still_seen(const char *path, int fd, const file_ident *seen, char *err, size_t err_len);

/* Whether another process has the open file fd open for writing: 1 yes,
 * 0 no, -1 unknown (no CAP_LEASE and not the owner, or a file system
 * without leases).  Takes and drops a read lease. */
int commit_open_for_writing(int fd);

/* Reads exactly len bytes from fd at offset 0; *data is malloc'd. */
int commit_read_fd(int fd, const char *path, size_t len, uint8_t **data, char *err, size_t err_len);

/* Removes stale temporary files (".tmp-*" and the older ".*.tmp-*") left by a killed process;
 * returns how many. */
int commit_cleanup_temps(const char *dir);

/* Reads a whole file of at most max bytes (larger: EFBIG); *data is
 * malloc'd.  errno kept on failure. */
int commit_read_file(const char *path, size_t max, uint8_t **data, size_t *len, char *err,
                     size_t err_len);

/* Whether errno means the outbox cannot take the file now but may later
 * (full, quota, I/O error, read-only, directory missing) rather than a
 * problem of the frame. */
int commit_errno_is_transient(int e);

/* Whether a failure to move or write one file cannot pass by retrying
 * (a name too long, no permission on that file, not a directory...). */
int commit_errno_is_permanent(int e);

/* "ENOSPC" style name of an errno value, for logs. */
const char *commit_errno_name(int e);

#endif

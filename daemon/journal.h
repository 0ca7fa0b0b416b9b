/* The commit journal: what makes a restart exactly-once when a sender
 * empties the outbox (issue #9).
 *
 * Between the rename of NAME.aurp into the outbox and the release of the
 * original there is a moment when a kill -9 leaves both; a sender may then
 * take NAME.aurp before the restart, which would find no packed copy and
 * pack (and send) the frame a second time.  So before the rename the
 * worker writes STATE_DIR/committing/NAME.aurp, naming the outbox's
 * temporary file and the original's identity, and removes it after the
 * release:
 *
 *   temporary file durable -> journal entry durable -> rename -> release
 *   -> entry removed
 *
 * At start (journal_resolve, before the outbox's temporary files are
 * cleaned) an entry whose temporary file is still in the outbox was never
 * renamed: it is dropped, and the frame is packed again.  Every other entry
 * means the packed copy was committed: if NAME.aurp is still in the outbox
 * the usual recovery checks and releases; if it is gone, it was sent, and
 * the original is released without packing it again (journal_committed).
 */
#ifndef AURORAD_JOURNAL_H
#define AURORAD_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "worker.h"

#define JOURNAL_SUBDIR "committing"

/* Writes the entry for OUTNAME (durable: file and directory fsynced). */
int journal_begin(const char *state_dir, const char *outname, const char *tmp_name,
                  const file_ident *seen, char *err, size_t err_len);

/* Removes the entry for OUTNAME, if any (durably). */
int journal_end(const char *state_dir, const char *outname, char *err, size_t err_len);

/* Whether an entry says OUTNAME was committed for this very original (same
 * device, inode, size and mtime).  An entry for another file of that name
 * is stale: it is removed and the answer is false. */
bool journal_committed(const char *state_dir, const char *outname, const file_ident *seen);

/* At start, before the outbox's temporary files are removed: creates the
 * journal directory, drops the entries whose rename never happened (and
 * leftover temporary files of the journal itself).  Returns the number of
 * entries kept (committed frames still to be released); *dropped gets the
 * number dropped.  -1 with err when the directory cannot be made. */
int journal_resolve(const char *state_dir, const char *outbox_dir, int *dropped, char *err,
                    size_t err_len);

#endif

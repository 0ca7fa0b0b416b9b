/* journal.c: entries written and removed durably; at start an entry whose
 * temporary outbox file is still there (never renamed) is dropped, the
 * others stand for committed copies of exactly that original. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal.h"
#include "scratch_dir.h"

static char state[128], outbox[128];

static void dirs(void)
{
    scratch_dir_make();
    snprintf(state, sizeof state, "%s/state", scratch_dir);
    snprintf(outbox, sizeof outbox, "%s/outbox", scratch_dir);
    cr_assert_eq(mkdir(state, 0700), 0);
    cr_assert_eq(mkdir(outbox, 0700), 0);
}

TestSuite(daemon_journal, .init = dirs, .fini = scratch_dir_remove);

static const file_ident FRAME = {.dev = 1, .ino = 2, .size = 3, .mtime_ns = 4000000000000000000};

static void touch(const char *dir, const char *name)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f);
    fclose(f);
}

Test(daemon_journal, begin_committed_end)
{
    char err[512];
    int dropped;
    cr_assert_eq(journal_resolve(state, outbox, &dropped, err, sizeof err), 0, "%s", err);
    cr_assert_eq(journal_begin(state, "f.fits.aurp", ".tmp-1-j1", &FRAME, err, sizeof err), 0, "%s", err);
    cr_assert(journal_committed(state, "f.fits.aurp", &FRAME));
    cr_assert_not(journal_committed(state, "g.fits.aurp", &FRAME));
    cr_assert_eq(journal_end(state, "f.fits.aurp", err, sizeof err), 0, "%s", err);
    cr_assert_not(journal_committed(state, "f.fits.aurp", &FRAME));
    cr_assert_eq(journal_end(state, "f.fits.aurp", err, sizeof err), 0, "removing twice is fine");
}

Test(daemon_journal, another_file_of_that_name_is_stale_and_removed)
{
    char err[512], p[512];
    int dropped;
    journal_resolve(state, outbox, &dropped, err, sizeof err);
    cr_assert_eq(journal_begin(state, "f.fits.aurp", ".tmp-1-j1", &FRAME, err, sizeof err), 0);
    file_ident other = FRAME;
    other.mtime_ns++;
    cr_assert_not(journal_committed(state, "f.fits.aurp", &other));
    snprintf(p, sizeof p, "%s/" JOURNAL_SUBDIR "/f.fits.aurp", state);
    cr_assert_neq(access(p, F_OK), 0);
}

Test(daemon_journal, resolve_drops_what_was_never_renamed)
{
    char err[512];
    int dropped;
    journal_resolve(state, outbox, &dropped, err, sizeof err);
    cr_assert_eq(journal_begin(state, "renamed.aurp", ".tmp-1-j1", &FRAME, err, sizeof err), 0);
    cr_assert_eq(journal_begin(state, "not-renamed.aurp", ".tmp-1-j2", &FRAME, err, sizeof err), 0);
    touch(outbox, ".tmp-1-j2"); /* its rename never happened */
    char jdir[256];
    snprintf(jdir, sizeof jdir, "%s/" JOURNAL_SUBDIR, state);
    touch(jdir, ".tmp-99-1"); /* an entry being written when the process died */
    cr_assert_eq(journal_resolve(state, outbox, &dropped, err, sizeof err), 1, "%s", err);
    cr_assert_eq(dropped, 1);
    cr_assert(journal_committed(state, "renamed.aurp", &FRAME));
    cr_assert_not(journal_committed(state, "not-renamed.aurp", &FRAME));
    char p[512];
    snprintf(p, sizeof p, "%s/.tmp-99-1", jdir);
    cr_assert_neq(access(p, F_OK), 0);
}

Test(daemon_journal, an_unreadable_entry_cannot_prove_a_commit)
{
    char err[512];
    int dropped;
    journal_resolve(state, outbox, &dropped, err, sizeof err);
    char jdir[256];
    snprintf(jdir, sizeof jdir, "%s/" JOURNAL_SUBDIR, state);
    touch(jdir, "empty.aurp");
    cr_assert_eq(journal_resolve(state, outbox, &dropped, err, sizeof err), 0);
    cr_assert_eq(dropped, 1);
}

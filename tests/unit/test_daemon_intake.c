/* When aurorad takes a file: the FITS-structure readiness check on the real
 * frames of /work/shared/data (whole, cut at every kind of boundary, and
 * garbage), and the intake's settle/stall rules and new-first alternation
 * on a real directory. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fitsready.h"
#include "intake.h"
#include "scratch_dir.h"

TestSuite(daemon_intake, .init = scratch_dir_make, .fini = scratch_dir_remove);

static const char *data_dir(void)
{
    const char *d = getenv("AURP_SHARED_DATA");
    return d ? d : "/work/shared/data";
}

static uint8_t *read_real(const char *name, size_t *len)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", data_dir(), name);
    FILE *f = fopen(p, "rb");
    if (!f) cr_skip_test("%s not available", p);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(*len);
    cr_assert_eq(fread(b, 1, *len, f), *len);
    fclose(f);
    return b;
}

static void write_bytes(const char *name, const void *data, size_t len)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", scratch_dir, name);
    FILE *f = fopen(p, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(data, 1, len, f), len);
    fclose(f);
}

static fitsready_result check(const char *name)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", scratch_dir, name);
    int fd = open(p, O_RDONLY);
    cr_assert_geq(fd, 0);
    struct stat st;
    fstat(fd, &st);
    fitsready_result r;
    fitsready_check_fd(fd, (uint64_t)st.st_size, &r);
    close(fd);
    return r;
}

Test(daemon_intake, real_frames_are_complete_only_when_whole)
{
    const char *frames[] = {"trex_20230503T060000_f0.fits", "kast_b1_arc.fits"};
    for (int k = 0; k < 2; k++) {
        size_t len;
        uint8_t *b = read_real(frames[k], &len);
        write_bytes("f.fits", b, len);
        fitsready_result r = check("f.fits");
        cr_assert_eq(r.state, FITSREADY_COMPLETE, "%s: %s", frames[k], r.why);
        cr_assert_eq(r.needed, len);
        /* every prefix cut at a block boundary or inside one is incomplete */
        size_t cuts[] = {0, 1, 2879, 2880, 5760, len / 2, len - 2880, len - 1};
        for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
            write_bytes("f.fits", b, cuts[i]);
            r = check("f.fits");
            cr_assert_eq(r.state, FITSREADY_INCOMPLETE, "%s cut at %zu: %d %s", frames[k], cuts[i],
                         r.state, r.why);
        }
        free(b);
    }
}

Test(daemon_intake, garbage_is_broken_at_once)
{
    const char junk[] = "this is a log file, not a frame\n";
    write_bytes("junk.fits", junk, sizeof junk - 1);
    fitsready_result r = check("junk.fits");
    cr_assert_eq(r.state, FITSREADY_BROKEN);
    cr_assert(strstr(r.why, "SIMPLE"), "%s", r.why);
}

static void set_mtime_ago(const char *name, int seconds)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", scratch_dir, name);
    struct timespec ts[2];
    clock_gettime(CLOCK_REALTIME, &ts[0]);
    ts[0].tv_sec -= seconds;
    ts[1] = ts[0];
    cr_assert_eq(utimensat(AT_FDCWD, p, ts, 0), 0);
}

Test(daemon_intake, settle_rule_and_first_sight_of_old_files)
{
    size_t len;
    uint8_t *b = read_real("trex_20230503T060000_f0.fits", &len);
    write_bytes("fresh.fits", b, len);
    write_bytes("old.fits", b, len);
    set_mtime_ago("old.fits", 3600);
    write_bytes(".hidden.fits", b, len);
    write_bytes("partial.fits.part", b, len);
    free(b);
    intake in;
    intake_init(&in, scratch_dir, 500, 5);
    int64_t t = 1000000000000LL;
    /* old and complete: taken at first sight; fresh: waits for settle */
    cr_assert_eq(intake_rescan(&in, true, t), 1);
    cr_assert_eq(intake_count(&in, ENTRY_QUEUED, 1), 1);
    cr_assert_eq(intake_count(&in, ENTRY_WATCHING, -1), 1);
    cr_assert_eq(intake_tick(&in, t + 400000000), 0);
    cr_assert_eq(intake_tick(&in, t + 500000000), 1);
    job j;
    cr_assert(intake_pick(&in, &j, t + 3000000000LL));
    cr_assert_str_eq(j.name, "old.fits");
    cr_assert(intake_pick(&in, &j, t + 3000000000LL));
    cr_assert_str_eq(j.name, "fresh.fits");
    cr_assert_eq(j.t_complete_ns, t, "complete since first seen with its final size");
    cr_assert_not(intake_pick(&in, &j, t + 3000000000LL));
    intake_free(&in);
}

Test(daemon_intake, a_truncated_file_is_taken_after_the_stall_time)
{
    size_t len;
    uint8_t *b = read_real("trex_20230503T060000_f0.fits", &len);
    write_bytes("cut.fits", b, len / 2);
    free(b);
    intake in;
    intake_init(&in, scratch_dir, 100, 2.0);
    int64_t t = 5000000000LL;
    cr_assert_eq(intake_rescan(&in, false, t), 0);
    cr_assert_eq(intake_tick(&in, t + 1900000000LL), 0);
    cr_assert_eq(intake_tick(&in, t + 2000000000LL), 1);
    job j;
    cr_assert(intake_pick(&in, &j, t + 3000000000LL));
    cr_assert(j.suspect);
    cr_assert(strstr(j.suspect_why, "truncated"), "%s", j.suspect_why);
    intake_free(&in);
}

Test(daemon_intake, new_and_backlog_alternate_new_first)
{
    size_t len;
    uint8_t *b = read_real("trex_20230503T060000_f0.fits", &len);
    char name[64];
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "b%d.fits", i);
        write_bytes(name, b, len);
        set_mtime_ago(name, 60);
    }
    intake in;
    intake_init(&in, scratch_dir, 0, 5);
    int64_t t = 1000000000LL;
    cr_assert_eq(intake_rescan(&in, true, t), 4);
    for (int i = 0; i < 2; i++) {
        snprintf(name, sizeof name, "n%d.fits", i);
        write_bytes(name, b, len);
        set_mtime_ago(name, 60);
        cr_assert(intake_look(&in, name, false, t + 1));
    }
    free(b);
    const char *want[] = {"n0.fits", "b0.fits", "n1.fits", "b1.fits", "b2.fits", "b3.fits"};
    job j;
    for (int i = 0; i < 6; i++) {
        cr_assert(intake_pick(&in, &j, t + 3000000000LL));
        cr_assert_str_eq(j.name, want[i], "pick %d", i);
        cr_assert_eq(j.backlog, want[i][0] == 'b');
    }
    /* a frame in flight is not looked at again */
    cr_assert_not(intake_look(&in, "b3.fits", false, t + 2));
    intake_forget(&in, "b2.fits");
    intake_free(&in);
}

/* A file that failed for a reason that may pass goes behind the others and
 * waits its own backoff: it never holds back the frames queued after it. */
Test(daemon_intake, a_retried_file_goes_behind_the_others_with_its_own_backoff)
{
    size_t len;
    uint8_t *b = read_real("trex_20230503T060000_f0.fits", &len);
    const char *names[] = {"a.fits", "b.fits", "c.fits"};
    for (int i = 0; i < 3; i++) {
        write_bytes(names[i], b, len);
        set_mtime_ago(names[i], 60);
    }
    free(b);
    intake in;
    intake_init(&in, scratch_dir, 0, 5);
    int64_t t = 1000000000LL;
    cr_assert_eq(intake_rescan(&in, true, t), 3);
    job j;
    cr_assert(intake_pick(&in, &j, t));
    cr_assert_str_eq(j.name, "a.fits");
    int attempt;
    int64_t delay = intake_retry(&in, "a.fits", t, 60000000000LL, &attempt);
    cr_assert_eq(delay, 250000000);
    cr_assert_eq(attempt, 1);
    cr_assert_eq(intake_next_due(&in), t + delay);
    cr_assert(intake_pick(&in, &j, t));
    cr_assert_str_eq(j.name, "b.fits", "the retried file must not stay at the head");
    cr_assert(intake_pick(&in, &j, t));
    cr_assert_str_eq(j.name, "c.fits");
    cr_assert_not(intake_pick(&in, &j, t + delay - 1), "due only after its backoff");
    cr_assert(intake_pick(&in, &j, t + delay));
    cr_assert_str_eq(j.name, "a.fits");
    delay = intake_retry(&in, "a.fits", t, 60000000000LL, &attempt);
    cr_assert_eq(delay, 500000000, "the backoff doubles");
    cr_assert_eq(attempt, 2);
    intake_free(&in);
}

/* A file that cannot be handled nor moved aside is skipped until its size,
 * mtime or inode changes. */
Test(daemon_intake, a_held_file_is_skipped_until_it_changes)
{
    size_t len;
    uint8_t *b = read_real("trex_20230503T060000_f0.fits", &len);
    write_bytes("stuck.fits", b, len);
    set_mtime_ago("stuck.fits", 60);
    intake in;
    intake_init(&in, scratch_dir, 0, 5);
    int64_t t = 1000000000LL;
    cr_assert_eq(intake_rescan(&in, false, t), 1);
    job j;
    cr_assert(intake_pick(&in, &j, t));
    cr_assert_eq(j.seen.size, len);
    cr_assert_neq(j.seen.ino, 0);
    intake_hold(&in, "stuck.fits");
    cr_assert_eq(intake_count(&in, ENTRY_HELD, -1), 1);
    cr_assert_eq(intake_rescan(&in, false, t + 1000000000LL), 0);
    cr_assert_not(intake_look(&in, "stuck.fits", false, t + 2000000000LL));
    write_bytes("stuck.fits", b, len); /* rewritten: a new mtime */
    free(b);
    set_mtime_ago("stuck.fits", 30);
    cr_assert(intake_look(&in, "stuck.fits", false, t + 3000000000LL));
    cr_assert_eq(intake_count(&in, ENTRY_HELD, -1), 0);
    intake_free(&in);
}

static int refused_calls;
static char refused_why[300];
static void note_refused(const char *name, const char *reason)
{
    (void)name;
    refused_calls++;
    snprintf(refused_why, sizeof refused_why, "%s", reason);
}

/* Names up to NAME_MAX are seen; those too long for the quarantine note are
 * refused once, loudly, and left where they are. */
Test(daemon_intake, a_name_too_long_is_refused_once)
{
    char name[256];
    memset(name, 'x', 250);
    name[250] = 0;
    write_bytes(name, "not fits", 8);
    set_mtime_ago(name, 60);
    char ok_name[256];
    memset(ok_name, 'y', JOB_NAME_ACCEPTED);
    ok_name[JOB_NAME_ACCEPTED] = 0;
    write_bytes(ok_name, "not fits", 8);
    set_mtime_ago(ok_name, 60);
    intake in;
    intake_init(&in, scratch_dir, 0, 5);
    in.on_refused = note_refused;
    refused_calls = 0;
    int64_t t = 1000000000LL;
    cr_assert_eq(intake_rescan(&in, false, t), 1, "the 248-byte name is taken");
    cr_assert_eq(intake_rescan(&in, false, t + 1), 0);
    cr_assert_eq(refused_calls, 1, "reported once, not on every look");
    cr_assert(strstr(refused_why, "longer than 248"), "%s", refused_why);
    intake_free(&in);
}

/* Only regular files: a FIFO or a symbolic link is never opened or taken. */
Test(daemon_intake, fifos_and_links_are_not_taken)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/pipe.fits", scratch_dir);
    cr_assert_eq(mkfifo(p, 0644), 0);
    size_t len;
    uint8_t *b = read_real("trex_20230503T060000_f0.fits", &len);
    write_bytes("target.dat", b, len);
    free(b);
    char target[4200];
    snprintf(target, sizeof target, "%s/target.dat", scratch_dir);
    snprintf(p, sizeof p, "%s/link.fits", scratch_dir);
    cr_assert_eq(symlink(target, p), 0);
    intake in;
    intake_init(&in, scratch_dir, 0, 5);
    int64_t t = 1000000000LL;
    intake_rescan(&in, false, t);
    cr_assert_not(intake_look(&in, "pipe.fits", false, t + 1));
    cr_assert_not(intake_look(&in, "link.fits", false, t + 1));
    job j;
    while (intake_pick(&in, &j, t + 2000000000LL)) cr_assert_str_eq(j.name, "target.dat");
    intake_free(&in);
}

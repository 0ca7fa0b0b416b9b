/* retention.c: originals in done_dir go oldest first by age, total size
 * and free space; hidden names (copies in progress) and directories are
 * never touched; disk_low_level halves. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "retention.h"
#include "scratch_dir.h"

TestSuite(daemon_retention, .init = scratch_dir_make, .fini = scratch_dir_remove);

#define NOW 1700000000.0
#define DAY 86400.0

/* A file of size bytes whose mtime is age_days before NOW. */
static void original_aged(const char *name, size_t size, double age_days)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", scratch_dir, name);
    FILE *f = fopen(p, "wb");
    cr_assert_not_null(f);
    for (size_t i = 0; i < size; i++) fputc((int)(i * 7), f);
    fclose(f);
    struct timespec t[2];
    t[0].tv_sec = t[1].tv_sec = (time_t)(NOW - age_days * DAY);
    t[0].tv_nsec = t[1].tv_nsec = 0;
    cr_assert_eq(utimensat(AT_FDCWD, p, t, 0), 0);
}

static bool exists(const char *name)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", scratch_dir, name);
    return access(p, F_OK) == 0;
}

Test(daemon_retention, off_without_rules)
{
    retention_rules r = {0};
    cr_assert_not(retention_enabled(&r));
    r.max_age_s = 1;
    cr_assert(retention_enabled(&r));
}

Test(daemon_retention, by_age_oldest_only)
{
    original_aged("a.fits", 100, 3);
    original_aged("b.fits", 100, 1.5);
    original_aged("c.fits", 100, 0.5);
    retention_rules r = {.max_age_s = DAY};
    retention_report rep;
    cr_assert_eq(retention_pass(scratch_dir, &r, NOW, &rep), 0);
    cr_assert_eq(rep.removed, 2);
    cr_assert_eq(rep.by_age, 2);
    cr_assert_eq(rep.removed_bytes, 200);
    cr_assert_eq(rep.kept, 1);
    cr_assert_eq(rep.kept_bytes, 100);
    cr_assert_float_eq(rep.oldest_kept_age_s, 0.5 * DAY, 1);
    cr_assert(!exists("a.fits") && !exists("b.fits") && exists("c.fits"));
}

Test(daemon_retention, by_size_oldest_first_until_under)
{
    original_aged("new.fits", 1000, 0.1);
    original_aged("old.fits", 1000, 0.3);
    original_aged("mid.fits", 1000, 0.2);
    retention_rules r = {.max_bytes = 2000};
    retention_report rep;
    cr_assert_eq(retention_pass(scratch_dir, &r, NOW, &rep), 0);
    cr_assert_eq(rep.removed, 1);
    cr_assert_eq(rep.by_size, 1);
    cr_assert(!exists("old.fits") && exists("mid.fits") && exists("new.fits"));
}

Test(daemon_retention, free_space_not_reachable_removes_all_and_says_so)
{
    original_aged("x.fits", 10, 0.1);
    original_aged("y.fits", 10, 0.2);
    retention_rules r = {.min_free = UINT64_MAX / 2};
    retention_report rep;
    cr_assert_eq(retention_pass(scratch_dir, &r, NOW, &rep), 0);
    cr_assert_eq(rep.by_free, 2);
    cr_assert_eq(rep.kept, 0);
    cr_assert(rep.free_unmet);
}

Test(daemon_retention, hidden_files_and_directories_are_never_removed)
{
    original_aged(".tmp-1-2", 100, 30);
    char p[256];
    snprintf(p, sizeof p, "%s/subdir", scratch_dir);
    cr_assert_eq(mkdir(p, 0700), 0);
    retention_rules r = {.max_age_s = 1, .max_bytes = 1, .min_free = UINT64_MAX / 2};
    retention_report rep;
    cr_assert_eq(retention_pass(scratch_dir, &r, NOW, &rep), 0);
    cr_assert_eq(rep.removed, 0);
    cr_assert(exists(".tmp-1-2") && exists("subdir"));
}

Test(daemon_retention, a_missing_directory_is_an_error)
{
    retention_rules r = {.max_age_s = 1};
    retention_report rep;
    cr_assert_eq(retention_pass("/nonexistent/done", &r, NOW, &rep), -1);
}

Test(daemon_retention, disk_low_level_rises_at_each_halving)
{
    const uint64_t warn = 1024;
    cr_assert_eq(disk_low_level(5000, warn), 0);
    cr_assert_eq(disk_low_level(1024, warn), 0);
    cr_assert_eq(disk_low_level(1023, warn), 1);
    cr_assert_eq(disk_low_level(511, warn), 2);
    cr_assert_eq(disk_low_level(255, warn), 3);
    cr_assert_eq(disk_low_level(0, warn), 8);
    cr_assert_eq(disk_low_level(0, 0), 0); /* warnings off */
    cr_assert_neq(disk_free_bytes(scratch_dir), UINT64_MAX);
    cr_assert_eq(disk_free_bytes("/nonexistent/dir"), UINT64_MAX);
}

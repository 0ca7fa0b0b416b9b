/* counters.c: totals that survive restarts (save, load back, damaged and
 * missing files) and the latency histogram's buckets. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "counters.h"
#include "scratch_dir.h"

TestSuite(daemon_counters, .init = scratch_dir_make, .fini = scratch_dir_remove);

Test(daemon_counters, a_missing_file_starts_at_zero_now)
{
    counters c;
    char err[512];
    int64_t before = (int64_t)time(NULL);
    cr_assert_eq(counters_load(scratch_dir, &c, err, sizeof err), 0);
    cr_assert_eq(c.committed, 0);
    cr_assert_eq(c.latency_count, 0);
    cr_assert_geq(c.since_s, before);
}

Test(daemon_counters, latency_lands_in_the_first_bucket_that_holds_it)
{
    counters c = {0};
    counters_add_latency(&c, counters_bucket_le[0] / 2);
    counters_add_latency(&c, counters_bucket_le[3]);
    counters_add_latency(&c, counters_bucket_le[COUNTERS_BUCKETS - 1] * 10);
    cr_assert_eq(c.latency_bucket[0], 1);
    cr_assert_eq(c.latency_bucket[3], 1);
    cr_assert_eq(c.latency_bucket[COUNTERS_BUCKETS], 1); /* +Inf */
    cr_assert_eq(c.latency_count, 3);
    for (int b = 1; b < COUNTERS_BUCKETS; b++) cr_assert_gt(counters_bucket_le[b], counters_bucket_le[b - 1]);
}

Test(daemon_counters, save_and_load_back_every_total)
{
    counters c = {0}, back;
    c.committed = 1234567890123ull;
    c.recovered = 2;
    c.quarantined = 3;
    c.over_budget = 4;
    c.retries = 5;
    c.gpu_fallbacks = 6;
    c.bytes_in = 7ull << 40;
    c.bytes_out = 8;
    c.retention_removed = 9;
    c.retention_removed_bytes = 10;
    c.since_s = 1600000000;
    counters_add_latency(&c, 0.25);
    counters_add_latency(&c, 99);
    char err[512], text[256];
    cr_assert_eq(counters_save(scratch_dir, &c, "12 frames done; outbox ok", "cpu x2", err, sizeof err), 0,
                 "%s", err);
    cr_assert_eq(counters_load(scratch_dir, &back, err, sizeof err), 0, "%s", err);
    cr_assert_eq(back.committed, c.committed);
    cr_assert_eq(back.recovered, 2);
    cr_assert_eq(back.quarantined, 3);
    cr_assert_eq(back.over_budget, 4);
    cr_assert_eq(back.retries, 5);
    cr_assert_eq(back.gpu_fallbacks, 6);
    cr_assert_eq(back.bytes_in, c.bytes_in);
    cr_assert_eq(back.bytes_out, 8);
    cr_assert_eq(back.retention_removed, 9);
    cr_assert_eq(back.retention_removed_bytes, 10);
    cr_assert_eq(back.since_s, 1600000000);
    cr_assert_eq(back.latency_count, 2);
    cr_assert_float_eq(back.latency_sum_s, 99.25, 1e-6);
    cr_assert_eq(memcmp(back.latency_bucket, c.latency_bucket, sizeof c.latency_bucket), 0);
    cr_assert(counters_read_text(scratch_dir, "status", text, sizeof text));
    cr_assert_str_eq(text, "12 frames done; outbox ok");
    cr_assert(counters_read_text(scratch_dir, "devices", text, sizeof text));
    cr_assert_str_eq(text, "cpu x2");
    cr_assert_not(counters_read_text(scratch_dir, "nothing", text, sizeof text));
}

Test(daemon_counters, a_damaged_file_is_refused_with_its_line)
{
    char p[256], err[512];
    snprintf(p, sizeof p, "%s/counters", scratch_dir);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f);
    fputs("committed 5\nthis is not a counter\n", f);
    fclose(f);
    counters c;
    cr_assert_eq(counters_load(scratch_dir, &c, err, sizeof err), -1);
    cr_assert(strstr(err, "counters:2: not a counter line") != NULL, "%s", err);
    cr_assert_eq(c.committed, 0, "a damaged file must not half-load");
}

/* aurorad configuration parsing: real YAML files on disk, the shipped
 * examples, and every error naming file:line:column. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "config.h"
#include "scratch_dir.h"

TestSuite(daemon_config, .init = scratch_dir_make, .fini = scratch_dir_remove);

static const char *write_file(const char *name, const char *text)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", scratch_dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

#define BASE                                                                                       \
    "incoming_dir: /var/lib/aurorad/incoming\n"                                                    \
    "outbox_dir: /var/spool/aurorad/outbox\n"                                                      \
    "quarantine_dir: /var/lib/aurorad/quarantine\n"                                                \
    "state_dir: /var/lib/aurorad/state\n"

Test(daemon_config, the_issue_example_parses_with_every_value)
{
    const char *p = write_file("a.yaml", BASE "done_dir: /var/lib/aurorad/done   # optional\n"
                                              "codec: {order: 9, equations: 5, threshold: 21}\n"
                                              "gpus: 4\nsplit: frames\nbudget_seconds: 12.5\n"
                                              "verify: false\n");
    aurorad_config c;
    char err[1024];
    cr_assert_eq(config_load(p, &c, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(c.incoming_dir, "/var/lib/aurorad/incoming");
    cr_assert_str_eq(c.outbox_dir, "/var/spool/aurorad/outbox");
    cr_assert_str_eq(c.done_dir, "/var/lib/aurorad/done");
    cr_assert_eq(c.codec.order, 9);
    cr_assert_eq(c.codec.equations, 5);
    cr_assert_eq(c.codec.threshold, 21);
    cr_assert_eq(c.gpus, 4);
    cr_assert_eq(c.split, SPLIT_FRAMES);
    cr_assert_float_eq(c.budget_seconds, 12.5, 1e-12);
    cr_assert_eq(c.verify, false);
}

Test(daemon_config, defaults_fill_the_optional_keys)
{
    const char *p = write_file("b.yaml", BASE);
    aurorad_config c;
    char err[1024];
    cr_assert_eq(config_load(p, &c, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(c.done_dir, "");
    cr_assert_eq(c.codec.profile, AURP_PROFILE_LSMIX);
    cr_assert_eq(c.codec.order, 6);
    cr_assert_eq(c.codec.equations, 9);
    cr_assert_eq(c.codec.threshold, 0);
    cr_assert_eq(c.gpus, 0);
    cr_assert_eq(c.split, SPLIT_FRAMES); /* docs/GPU.md: the recommended mode */
    cr_assert_eq(c.verify, true);
    cr_assert_eq(c.cpu_workers, -1);
    cr_assert_eq(c.log_level, LOG_INFO);
}

Test(daemon_config, the_shipped_examples_are_valid)
{
    const char *files[] = {"config/aurorad.yaml", "config/demo.yaml"};
    for (int i = 0; i < 2; i++) {
        aurorad_config c;
        char err[1024];
        if (access(files[i], R_OK) != 0) cr_skip_test("run from the repository root");
        cr_assert_eq(config_load(files[i], &c, err, sizeof err), 0, "%s", err);
    }
}

static void expect_error(const char *text, const char *want)
{
    const char *p = write_file("bad.yaml", text);
    aurorad_config c;
    char err[1024], full[1400];
    cr_assert_neq(config_load(p, &c, err, sizeof err), 0, "accepted: %s", text);
    snprintf(full, sizeof full, "%s:%s", p, want);
    cr_assert_str_eq(err, full);
}

Test(daemon_config, unknown_keys_are_errors_with_position)
{
    expect_error(BASE "gpu: 2\n", "5:1: unknown key 'gpu'");
    expect_error(BASE "codec: {order: 11, equatons: 7}\n",
                 "5:20: unknown key 'codec.equatons' (known: order, equations, threshold, profile)");
}

Test(daemon_config, bad_values_are_errors_with_position)
{
    expect_error(BASE "gpus: four\n", "5:7: gpus: 'four' is not an integer");
    expect_error(BASE "gpus: -1\n", "5:7: gpus: -1 is outside 0..16");
    expect_error(BASE "split: rows\n", "5:8: split: expected 'columns' or 'frames'");
    expect_error(BASE "verify: maybe\n", "5:9: verify: expected true or false");
    expect_error(BASE "budget_seconds: 0\n", "5:17: budget_seconds: 0 is outside 0.001..86400");
    expect_error(BASE "codec: {order: 40}\n", "5:16: codec.order: 40 is outside 1..32");
    expect_error(BASE "done_dir: relative/done\n", "5:11: done_dir: 'relative/done' is not an absolute path");
}

Test(daemon_config, structure_errors)
{
    expect_error(BASE "gpus: 1\ngpus: 2\n", "6:1: duplicate key 'gpus'");
    expect_error("outbox_dir: /o\nquarantine_dir: /q\nstate_dir: /s\n",
                 "1:1: missing required key 'incoming_dir'");
    expect_error(BASE "done_dir: /var/spool/aurorad/outbox\n",
                 "1:1: outbox_dir and done_dir are the same directory (/var/spool/aurorad/outbox)");
    expect_error("- a\n- b\n", "1:1: top level: expected a mapping");
    expect_error("", "1:1: the file is empty");
}

Test(daemon_config, yaml_syntax_errors_carry_the_parser_position)
{
    const char *p = write_file("syn.yaml", BASE "codec: {order: 11\n");
    aurorad_config c;
    char err[1024];
    cr_assert_neq(config_load(p, &c, err, sizeof err), 0);
    char prefix[600];
    snprintf(prefix, sizeof prefix, "%s:6:", p);
    cr_assert(strncmp(err, prefix, strlen(prefix)) == 0, "%s", err);
}

Test(daemon_config, a_missing_file_is_named)
{
    aurorad_config c;
    char err[1024];
    cr_assert_neq(config_load("/nonexistent/aurorad.yaml", &c, err, sizeof err), 0);
    cr_assert_str_eq(err, "/nonexistent/aurorad.yaml: cannot open: No such file or directory");
}

Test(daemon_config, extras_and_auto)
{
    const char *p = write_file("x.yaml", BASE "gpus: 2\ngpu_devices: [3, 1]\ncpu_workers: auto\n"
                                              "cpu_threads: 4\nmax_in_flight: 6\nsettle_ms: 0\n"
                                              "log_level: debug\nlog_prefix: false\ndone_dir:\n");
    aurorad_config c;
    char err[1024];
    cr_assert_eq(config_load(p, &c, err, sizeof err), 0, "%s", err);
    cr_assert_eq(c.ngpu_devices, 2);
    cr_assert_eq(c.gpu_devices[0], 3);
    cr_assert_eq(c.gpu_devices[1], 1);
    cr_assert_eq(c.cpu_workers, -1);
    cr_assert_eq(c.cpu_threads, 4);
    cr_assert_eq(c.max_in_flight, 6);
    cr_assert_eq(c.settle_ms, 0);
    cr_assert_eq(c.log_level, LOG_DEBUG);
    cr_assert_eq(c.log_prefix, LOG_PREFIX_OFF);
    cr_assert_str_eq(c.done_dir, "");
}

/* The profile's defaults fill what the file leaves out, whatever the order of the keys. */
Test(daemon_config, profile_defaults_and_overrides)
{
    aurorad_config c;
    char err[1024];
    const char *p = write_file("p1.yaml", BASE "codec: {order: 5, profile: paper}\n");
    cr_assert_eq(config_load(p, &c, err, sizeof err), 0, "%s", err);
    cr_assert_eq(c.codec.profile, AURP_PROFILE_PAPER);
    cr_assert(c.codec.order == 5 && c.codec.equations == 7 && c.codec.threshold == 13);
    p = write_file("p2.yaml", BASE "codec: {profile: lsmix, equations: 8}\n");
    cr_assert_neq(config_load(p, &c, err, sizeof err), 0);
    cr_assert(strstr(err, "odd") != NULL, "%s", err);
    p = write_file("p3.yaml", BASE "codec: {equations: 17}\n");
    cr_assert_eq(config_load(p, &c, err, sizeof err), 0, "%s", err);
    cr_assert(c.codec.profile == AURP_PROFILE_LSMIX && c.codec.order == 6 && c.codec.equations == 17);
}

Test(daemon_config, every_error_is_reported_one_per_line)
{
    const char *p = write_file("many.yaml", BASE "gpus: four\nsplit: rows\ngpu: 2\nverify_workers: 0\n");
    aurorad_config c;
    char err[4096], want[4096];
    cr_assert_neq(config_load(p, &c, err, sizeof err), 0);
    snprintf(want, sizeof want,
             "%s:5:7: gpus: 'four' is not an integer\n"
             "%s:6:8: split: expected 'columns' or 'frames'\n"
             "%s:7:1: unknown key 'gpu'\n"
             "%s:8:17: verify_workers: 0 is outside 1..1024",
             p, p, p, p);
    cr_assert_str_eq(err, want);
}

Test(daemon_config, a_key_present_but_wrong_is_not_also_missing)
{
    const char *p = write_file("rel.yaml", "incoming_dir: relative\noutbox_dir: /o\n"
                                           "quarantine_dir: /q\nstate_dir: /s\n");
    aurorad_config c;
    char err[4096], want[4096];
    cr_assert_neq(config_load(p, &c, err, sizeof err), 0);
    snprintf(want, sizeof want, "%s:1:15: incoming_dir: 'relative' is not an absolute path", p);
    cr_assert_str_eq(err, want);
}

Test(daemon_config, tabs_in_indentation_are_explained_on_every_line)
{
    const char *p = write_file("tabs.yaml", BASE "codec:\n\torder: 11\n  \tequations: 7\n");
    aurorad_config c;
    char err[4096], want[4096];
    cr_assert_neq(config_load(p, &c, err, sizeof err), 0);
    snprintf(want, sizeof want,
             "%s:6:1: YAML forbids tabs for indentation: line 6 col 1 (indent with spaces)\n"
             "%s:7:3: YAML forbids tabs for indentation: line 7 col 3 (indent with spaces)",
             p, p);
    cr_assert_str_eq(err, want);
}

Test(daemon_config, verify_workers_auto_or_a_count)
{
    aurorad_config c;
    char err[1024];
    const char *p = write_file("vw.yaml", BASE "verify_workers: 3\n");
    cr_assert_eq(config_load(p, &c, err, sizeof err), 0, "%s", err);
    cr_assert_eq(c.verify_workers, 3);
    p = write_file("vw2.yaml", BASE "verify_workers: auto\n");
    cr_assert_eq(config_load(p, &c, err, sizeof err), 0, "%s", err);
    cr_assert_eq(c.verify_workers, -1);
}

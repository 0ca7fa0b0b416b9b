/* capture.c: the capture time that names a frame's packed copy, from
 * DATE-OBS (with TIME-OBS for a date alone) or DATE, and the outbox
 * prefix built from it. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "capture.h"

/* A primary header of 80-character cards, padded to one 2880-byte block. */
static size_t header(char *buf, const char *const *cards)
{
    memset(buf, ' ', 2880);
    size_t n = 0;
    for (; cards[n]; n++) memcpy(buf + 80 * n, cards[n], strlen(cards[n]));
    memcpy(buf + 80 * n, "END", 3);
    return 2880;
}

static int64_t capture_of(const char *const *cards, bool *found)
{
    char buf[2880];
    size_t len = header(buf, cards);
    int64_t ms = -1;
    *found = capture_time_from_header((const uint8_t *)buf, len, &ms);
    return ms;
}

#define T_20140715_132940 1405430980LL /* 2014-07-15T13:29:40Z */

Test(daemon_capture, date_obs_with_milliseconds)
{
    const char *cards[] = {"SIMPLE  =                    T", "BITPIX  =                   16",
                           "DATE-OBS= '2014-07-15T13:29:40.123'", NULL};
    bool found;
    cr_assert_eq(capture_of(cards, &found), T_20140715_132940 * 1000 + 123);
    cr_assert(found);
}

Test(daemon_capture, a_date_alone_takes_time_obs)
{
    const char *cards[] = {"SIMPLE  =                    T", "DATE-OBS= '2014-07-15'",
                           "TIME-OBS= '13:29:40'", NULL};
    bool found;
    cr_assert_eq(capture_of(cards, &found), T_20140715_132940 * 1000);
    cr_assert(found);
}

Test(daemon_capture, date_when_there_is_no_date_obs)
{
    const char *cards[] = {"SIMPLE  =                    T", "DATE    = '2014-07-15T13:29:40'", NULL};
    bool found;
    cr_assert_eq(capture_of(cards, &found), T_20140715_132940 * 1000);
    cr_assert(found);
}

Test(daemon_capture, no_usable_time_is_false)
{
    const char *none[] = {"SIMPLE  =                    T", NULL};
    const char *bad[] = {"SIMPLE  =                    T", "DATE-OBS= 'yesterday'", NULL};
    bool found;
    capture_of(none, &found);
    cr_assert_not(found);
    capture_of(bad, &found);
    cr_assert_not(found);
    int64_t ms;
    cr_assert_not(capture_time_from_header((const uint8_t *)"SIMPLE", 6, &ms));
}

Test(daemon_capture, prefix_sorts_as_time_and_is_recognised)
{
    char p[CAPTURE_PREFIX_LEN + 1], q[CAPTURE_PREFIX_LEN + 1];
    capture_prefix(T_20140715_132940 * 1000 + 7, p);
    cr_assert_str_eq(p, "20140715T132940.007Z_");
    cr_assert_eq(strlen(p), CAPTURE_PREFIX_LEN);
    capture_prefix(T_20140715_132940 * 1000 + 1000, q);
    cr_assert(strcmp(p, q) < 0);
    char name[64];
    snprintf(name, sizeof name, "%sframe.fits.aurp", p);
    cr_assert(capture_has_prefix(name));
    cr_assert_not(capture_has_prefix("20140715_132940.fits.aurp"));
}

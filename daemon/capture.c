#include "capture.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* The quoted value of card KEY in the primary header, into val. */
static bool card_value(const uint8_t *data, size_t len, const char *key, char *val, size_t cap)
{
    size_t klen = strlen(key);
    for (size_t off = 0; off + 80 <= len && off < 2880 * 64; off += 80) {
        const char *c = (const char *)data + off;
        if (!memcmp(c, "END     ", 8)) return false;
        if (memcmp(c, key, klen) != 0) continue;
        size_t i = klen;
        while (i < 8 && c[i] == ' ') i++;
        if (i != 8 || c[8] != '=' ) continue;
        const char *q = memchr(c + 10, '\'', 70);
        if (!q) return false;
        const char *e = memchr(q + 1, '\'', (size_t)(c + 80 - (q + 1)));
        if (!e) return false;
        size_t n = (size_t)(e - q - 1);
        while (n && q[n] == ' ') n--; /* trailing blanks inside the quotes */
        if (n >= cap) return false;
        memcpy(val, q + 1, n);
        val[n] = 0;
        return true;
    }
    return false;
}

/* "YYYY-MM-DD[Thh:mm:ss[.f...]]" (a 'T' or a blank between) -> epoch ms. */
static bool parse_iso(const char *s, const char *time_part, int64_t *ms)
{
    int Y, M, D, h = 0, m = 0, n = 0;
    double sec = 0;
    if (sscanf(s, "%4d-%2d-%2d%n", &Y, &M, &D, &n) != 3 || n != 10) return false;
    const char *t = s[10] ? s + 11 : time_part;
    if ((s[10] && s[10] != 'T' && s[10] != ' ')) return false;
    if (t && *t) {
        int used = 0;
        if (sscanf(t, "%2d:%2d:%lf%n", &h, &m, &sec, &used) != 3) return false;
        if (t[used] && t[used] != 'Z') return false;
    }
    if (Y < 1900 || Y > 9999 || M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 ||
        sec < 0 || sec >= 61)
        return false;
    struct tm tm = {.tm_year = Y - 1900, .tm_mon = M - 1, .tm_mday = D, .tm_hour = h, .tm_min = m};
    time_t base = timegm(&tm);
    *ms = (int64_t)base * 1000 + (int64_t)(sec * 1000 + 0.5);
    return true;
}

bool capture_time_from_header(const uint8_t *data, size_t len, int64_t *epoch_ms)
{
    char v[72], t[72];
    if (card_value(data, len, "DATE-OBS", v, sizeof v)) {
        bool have_time = card_value(data, len, "TIME-OBS", t, sizeof t);
        if (parse_iso(v, have_time ? t : NULL, epoch_ms)) return true;
    }
    return card_value(data, len, "DATE", v, sizeof v) && parse_iso(v, NULL, epoch_ms);
}

void capture_prefix(int64_t epoch_ms, char out[CAPTURE_PREFIX_LEN + 1])
{
    time_t s = (time_t)(epoch_ms >= 0 ? epoch_ms / 1000 : (epoch_ms - 999) / 1000);
    int frac = (int)(epoch_ms - (int64_t)s * 1000);
    struct tm tm;
    gmtime_r(&s, &tm);
    char buf[64];
    snprintf(buf, sizeof buf, "%04d%02d%02dT%02d%02d%02d.%03dZ_", (tm.tm_year + 1900) % 10000,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
    memcpy(out, buf, CAPTURE_PREFIX_LEN);
    out[CAPTURE_PREFIX_LEN] = 0;
}

bool capture_has_prefix(const char *name)
{
    /* 8 digits, T, 6 digits, '.', 3 digits, Z, _ */
    static const char want[] = "ddddddddTdddddd.dddZ_";
    for (int i = 0; want[i]; i++) {
        if (!name[i]) return false;
        if (want[i] == 'd' ? !isdigit((unsigned char)name[i]) : name[i] != want[i]) return false;
    }
    return true;
}

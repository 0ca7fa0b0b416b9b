#include "log.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int g_level = LOG_INFO;
static bool g_prefix = false;
static bool g_text = false;

/* JOURNAL_STREAM="DEV:INODE" names the journal stream systemd connected; it
 * is inherited by children, so compare with what stderr really is. */
static bool stderr_is_journal(void)
{
    const char *js = getenv("JOURNAL_STREAM");
    unsigned long long dev, ino;
    struct stat st;
    if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 || fstat(2, &st) != 0) return false;
    return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void log_setup(int level, config_log_prefix prefix, config_log_format format)
{
    g_level = level;
    g_prefix = prefix == LOG_PREFIX_ON || (prefix == LOG_PREFIX_AUTO && stderr_is_journal());
    g_text = format == LOG_FORMAT_TEXT || (format == LOG_FORMAT_AUTO && isatty(2));
}

bool log_is_text(void) { return g_text; }

bool log_enabled(int level) { return level <= g_level; }

const char *log_level_name(int level)
{
    switch (level) {
    case LOG_EMERG: return "emerg";
    case LOG_ALERT: return "alert";
    case LOG_CRIT: return "crit";
    case LOG_ERR: return "error";
    case LOG_WARNING: return "warning";
    case LOG_NOTICE: return "notice";
    case LOG_INFO: return "info";
    default: return "debug";
    }
}

static void put(log_line *l, const char *s, size_t n)
{
    if (l->len + n >= sizeof l->buf - 8) n = sizeof l->buf - 8 - l->len; /* keep room for "}\n" */
    memcpy(l->buf + l->len, s, n);
    l->len += n;
}

static void put_escaped(log_line *l, const char *s)
{
    put(l, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char tmp[8];
        if (*p == '"' || *p == '\\') {
            tmp[0] = '\\';
            tmp[1] = (char)*p;
            put(l, tmp, 2);
        } else if (*p < 0x20 || *p == 0x7f) {
            int n = snprintf(tmp, sizeof tmp, "\\u%04x", *p);
            put(l, tmp, (size_t)n);
        } else {
            put(l, (const char *)p, 1);
        }
    }
    put(l, "\"", 1);
}

/* Text: a value goes bare unless it is empty or holds a space, a quote, a
 * backslash, '=' or a control character; then quoted and escaped as JSON. */
static void put_text_value(log_line *l, const char *s)
{
    bool bare = *s != 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && bare; p++)
        if (*p <= 0x20 || *p == '"' || *p == '\\' || *p == '=' || *p == 0x7f) bare = false;
    if (bare) put(l, s, strlen(s));
    else put_escaped(l, s);
}

static void put_key(log_line *l, const char *key)
{
    if (g_text) {
        put(l, " ", 1);
        put(l, key, strlen(key));
        put(l, "=", 1);
        return;
    }
    put(l, ",", 1);
    put_escaped(l, key);
    put(l, ":", 1);
}

void log_begin(log_line *l, int level, const char *event)
{
    l->len = 0;
    l->level = level;
    if (g_prefix) {
        char p[8];
        int n = snprintf(p, sizeof p, "<%d>", level);
        put(l, p, (size_t)n);
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char t[64];
    size_t n = strftime(t, sizeof t, g_text ? "%Y-%m-%d %H:%M:%S" : "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(t + n, sizeof t - n, ".%03ldZ", ts.tv_nsec / 1000000);
    if (g_text) {
        char head[160];
        int hn = snprintf(head, sizeof head, "%s %-7s %s", t, log_level_name(level), event);
        put(l, head, hn > 0 && (size_t)hn < sizeof head ? (size_t)hn : 0);
        return;
    }
    put(l, "{\"ts\":", 6);
    put_escaped(l, t);
    put_key(l, "level");
    put_escaped(l, log_level_name(level));
    put_key(l, "event");
    put_escaped(l, event);
}

void log_str(log_line *l, const char *key, const char *val)
{
    put_key(l, key);
    if (!val) put(l, "null", 4);
    else if (g_text) put_text_value(l, val);
    else put_escaped(l, val);
}

void log_int(log_line *l, const char *key, int64_t val)
{
    char t[32];
    int n = snprintf(t, sizeof t, "%lld", (long long)val);
    put_key(l, key);
    put(l, t, (size_t)n);
}

void log_num(log_line *l, const char *key, double val, int decimals)
{
    put_key(l, key);
    if (!isfinite(val)) {
        put(l, "null", 4);
        return;
    }
    char t[64];
    int n = snprintf(t, sizeof t, "%.*f", decimals, val);
    put(l, t, (size_t)n);
}

void log_bool(log_line *l, const char *key, bool val)
{
    put_key(l, key);
    put(l, val ? "true" : "false", val ? 4 : 5);
}

void log_end(log_line *l)
{
    if (!log_enabled(l->level)) return;
    if (g_text) put(l, "\n", 1);
    else put(l, "}\n", 2);
    /* one write per line; a short write on a pipe of this size does not happen */
    ssize_t w = write(2, l->buf, l->len);
    (void)w;
}

void log_msg(int level, const char *event, const char *fmt, ...)
{
    if (!log_enabled(level)) return;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log_line l;
    log_begin(&l, level, event);
    log_str(&l, "msg", msg);
    log_end(&l);
}

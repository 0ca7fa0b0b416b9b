/* aurorad logging: one JSON object per line on stderr, or, when stderr is a
 * terminal (log_format: auto) or log_format is text, one readable line:
 *   2026-11-23 13:40:59.788Z notice  stopped frames_done=6 reason="a b"
 * with the same fields in the same order.
 *
 * With the prefix on, every line starts with "<N>" (N = syslog priority,
 * sd-daemon(3)); journald strips it and files the line at that priority, so
 * `journalctl -u aurorad -o cat | jq` reads pure JSON.  The prefix is on by
 * default only when stderr is the journal (JOURNAL_STREAM matches it).
 * Lines are written with one write(2) each, so threads never interleave.
 */
#ifndef AURORAD_LOG_H
#define AURORAD_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <syslog.h>

#include "config.h"

void log_setup(int level, config_log_prefix prefix, config_log_format format);
/* Whether lines are readable text now (else JSON). */
bool log_is_text(void);
bool log_enabled(int level);

/* A line under construction: log_begin, fields, log_end. */
typedef struct {
    char buf[4096];
    size_t len;
    int level;
} log_line;

void log_begin(log_line *l, int level, const char *event);
void log_str(log_line *l, const char *key, const char *val);
void log_int(log_line *l, const char *key, int64_t val);
void log_num(log_line *l, const char *key, double val, int decimals);
void log_bool(log_line *l, const char *key, bool val);
void log_end(log_line *l);

/* One-liner: event plus a message. */
void log_msg(int level, const char *event, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

const char *log_level_name(int level);

#endif

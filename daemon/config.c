/* aurorad configuration parser (libyaml document API: every node carries its
 * line and column, which the error messages need). */
#include "config.h"

#include <limits.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <syslog.h>
#include <yaml.h>

void config_defaults(aurorad_config *c)
{
    memset(c, 0, sizeof *c);
    aurp_params_default(&c->codec);
    /* order, equations, threshold: -1 until parsed; the profile's defaults otherwise */
    c->codec.order = c->codec.equations = c->codec.threshold = -1;
    c->gpus = 0;
    c->split = SPLIT_FRAMES; /* docs/GPU.md: more throughput for a backlog, same latency at 15 s */
    c->cpu_workers = -1;
    c->cpu_threads = -1;
    c->max_in_flight = -1;
    c->verify_workers = -1;
    c->budget_seconds = 15;
    c->verify = true;
    c->settle_ms = 500;
    c->stall_seconds = 120;
    c->rescan_seconds = 5;
    c->retry_max_seconds = 60;
    c->gpu_retry_seconds = 60;
    c->max_frame_bytes = CONFIG_DEFAULT_MAX_FRAME_BYTES;
    c->log_level = LOG_INFO;
    c->log_prefix = LOG_PREFIX_AUTO;
    c->latency_window = 100;
    c->outbox_capture_names = true;
    c->disk_warn_free = 2ull << 30;
}

int config_log_format_from_name(const char *s, config_log_format *f)
{
    if (!s) return -1;
    if (!strcmp(s, "auto")) *f = LOG_FORMAT_AUTO;
    else if (!strcmp(s, "json")) *f = LOG_FORMAT_JSON;
    else if (!strcmp(s, "text")) *f = LOG_FORMAT_TEXT;
    else return -1;
    return 0;
}

const char *config_split_name(config_split s)
{
    return s == SPLIT_FRAMES ? "frames" : "columns";
}

/* Every error is collected, one per line in err, so that an operator
 * fixes a file in one go instead of one error per run. */
typedef struct {
    const char *name;
    yaml_document_t *doc;
    char *err;
    size_t err_len;
    int errors;
} parse_ctx;

/* Appends one line (msg) to the error text; returns -1. */
static int add_error(parse_ctx *px, const char *msg)
{
    size_t used = px->errors ? strlen(px->err) : 0;
    if (used + 1 < px->err_len)
        snprintf(px->err + used, px->err_len - used, "%s%s", px->errors ? "\n" : "", msg);
    px->errors++;
    return -1;
}

static int fail_at_mark(parse_ctx *px, size_t line, size_t col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail_at_mark(parse_ctx *px, size_t line, size_t col, const char *fmt, ...)
{
    char msg[CONFIG_PATH_MAX * 3 + 512];
    int len = snprintf(msg, sizeof msg, "%s:%zu:%zu: ", px->name, line + 1, col + 1);
    if (len < 0 || (size_t)len >= sizeof msg) return add_error(px, msg);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + len, sizeof msg - (size_t)len, fmt, ap);
    va_end(ap);
    return add_error(px, msg);
}

static int fail_at(parse_ctx *px, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail_at(parse_ctx *px, const yaml_node_t *n, const char *fmt, ...)
{
    char msg[CONFIG_PATH_MAX * 3 + 512];
    int len = snprintf(msg, sizeof msg, "%s:%zu:%zu: ", px->name,
                       n ? n->start_mark.line + 1 : 1, n ? n->start_mark.column + 1 : 1);
    if (len < 0 || (size_t)len >= sizeof msg) return add_error(px, msg);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + len, sizeof msg - (size_t)len, fmt, ap);
    va_end(ap);
    return add_error(px, msg);
}

/* YAML forbids tabs in indentation; libyaml's own words for it ("found
 * character that cannot start any token") do not say so.  Reports every
 * such line; returns how many. */
static int report_indent_tabs(parse_ctx *px, const char *text, size_t len)
{
    int found = 0;
    size_t line = 0, col = 0;
    bool indent = true;
    for (size_t i = 0; i < len; i++) {
        char ch = text[i];
        if (ch == '\n') {
            line++;
            col = 0;
            indent = true;
            continue;
        }
        if (indent && ch == '\t') {
            fail_at_mark(px, line, col, "YAML forbids tabs for indentation: line %zu col %zu "
                         "(indent with spaces)", line + 1, col + 1);
            found++;
            indent = false; /* one report per line */
        } else if (ch != ' ') {
            indent = false;
        }
        col++;
    }
    return found;
}

/* Whether the top-level mapping has KEY (present but wrong is reported
 * where it is, not again as missing). */
static bool has_key(parse_ctx *px, yaml_node_t *root, const char *key)
{
    if (root->type != YAML_MAPPING_NODE) return false;
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
        yaml_node_t *kn = yaml_document_get_node(px->doc, p->key);
        if (kn && kn->type == YAML_SCALAR_NODE && !strcmp((const char *)kn->data.scalar.value, key))
            return true;
    }
    return false;
}

static const char *scalar(const yaml_node_t *n)
{
    return n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int get_string(parse_ctx *px, const yaml_node_t *n, const char *key, char *dst, size_t cap)
{
    const char *s = scalar(n);
    if (!s) return fail_at(px, n, "%s: expected a string", key);
    if (strlen(s) >= cap) return fail_at(px, n, "%s: longer than %zu bytes", key, cap - 1);
    strcpy(dst, s);
    return 0;
}

static int get_path(parse_ctx *px, const yaml_node_t *n, const char *key, char *dst, size_t cap)
{
    if (get_string(px, n, key, dst, cap)) return -1;
    if (dst[0] != '/') return fail_at(px, n, "%s: '%s' is not an absolute path", key, dst);
    size_t l = strlen(dst);
    while (l > 1 && dst[l - 1] == '/') dst[--l] = 0; /* "/a/b/" == "/a/b" */
    return 0;
}

static int get_int(parse_ctx *px, const yaml_node_t *n, const char *key, long lo, long hi, int *dst)
{
    const char *s = scalar(n);
    if (!s || !*s) return fail_at(px, n, "%s: expected an integer", key);
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end) return fail_at(px, n, "%s: '%s' is not an integer", key, s);
    if (v < lo || v > hi) return fail_at(px, n, "%s: %ld is outside %ld..%ld", key, v, lo, hi);
    *dst = (int)v;
    return 0;
}

/* An integer, or "auto" (-1). */
static int get_int_auto(parse_ctx *px, const yaml_node_t *n, const char *key, long lo, long hi,
                        int *dst)
{
    const char *s = scalar(n);
    if (s && strcmp(s, "auto") == 0) {
        *dst = -1;
        return 0;
    }
    return get_int(px, n, key, lo, hi, dst);
}

static int get_double(parse_ctx *px, const yaml_node_t *n, const char *key, double lo, double hi,
                      double *dst)
{
    const char *s = scalar(n);
    if (!s || !*s) return fail_at(px, n, "%s: expected a number", key);
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v)) return fail_at(px, n, "%s: '%s' is not a number", key, s);
    if (v < lo || v > hi) return fail_at(px, n, "%s: %g is outside %g..%g", key, v, lo, hi);
    *dst = v;
    return 0;
}

/* A byte count: an integer with an optional suffix K, M, G (or KiB, MiB,
 * GiB; powers of 1024). */
static int get_bytes(parse_ctx *px, const yaml_node_t *n, const char *key, uint64_t lo,
                     uint64_t hi, uint64_t *dst)
{
    const char *s = scalar(n);
    if (!s || !*s) return fail_at(px, n, "%s: expected a size in bytes", key);
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || s[0] == '-')
        return fail_at(px, n, "%s: '%s' is not a size (bytes, or with K, M, G)", key, s);
    static const struct { const char *suffix; int shift; } units[] = {
        {"", 0}, {"K", 10}, {"KiB", 10}, {"M", 20}, {"MiB", 20}, {"G", 30}, {"GiB", 30}};
    int shift = -1;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (!strcmp(end, units[i].suffix)) shift = units[i].shift;
    if (shift < 0 || v > (hi >> shift))
        return fail_at(px, n, "%s: '%s' is not a size between %llu and %llu bytes", key, s,
                       (unsigned long long)lo, (unsigned long long)hi);
    uint64_t b = (uint64_t)v << shift;
    if (b < lo) return fail_at(px, n, "%s: %llu bytes is less than %llu", key,
                               (unsigned long long)b, (unsigned long long)lo);
    *dst = b;
    return 0;
}

/* true/yes/on or false/no/off; -1 (nothing reported) otherwise. */
static int parse_bool(const char *s, bool *dst)
{
    if (s && (!strcasecmp(s, "true") || !strcasecmp(s, "yes") || !strcasecmp(s, "on"))) {
        *dst = true;
        return 0;
    }
    if (s && (!strcasecmp(s, "false") || !strcasecmp(s, "no") || !strcasecmp(s, "off"))) {
        *dst = false;
        return 0;
    }
    return -1;
}

static int get_bool(parse_ctx *px, const yaml_node_t *n, const char *key, bool *dst)
{
    if (parse_bool(scalar(n), dst) == 0) return 0;
    return fail_at(px, n, "%s: expected true or false", key);
}

/* Walks a mapping, rejecting non-scalar and duplicate keys; calls fn per pair. */
typedef int (*pair_fn)(parse_ctx *px, const char *key, yaml_node_t *kn, yaml_node_t *vn,
                       aurorad_config *c);

static int each_pair(parse_ctx *px, yaml_node_t *map, const char *what, pair_fn fn,
                     aurorad_config *c)
{
    if (map->type != YAML_MAPPING_NODE) return fail_at(px, map, "%s: expected a mapping", what);
    int rc = 0;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *kn = yaml_document_get_node(px->doc, p->key);
        yaml_node_t *vn = yaml_document_get_node(px->doc, p->value);
        const char *key = scalar(kn);
        if (!key) {
            rc = fail_at(px, kn, "%s: keys must be plain strings", what);
            continue;
        }
        bool dup = false;
        for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p && !dup; q++) {
            const char *prev = scalar(yaml_document_get_node(px->doc, q->key));
            dup = prev && !strcmp(prev, key);
        }
        if (dup) rc = fail_at(px, kn, "duplicate key '%s'", key);
        else if (fn(px, key, kn, vn, c)) rc = -1; /* reported; go on to the next key */
    }
    return rc;
}

static int codec_pair(parse_ctx *px, const char *key, yaml_node_t *kn, yaml_node_t *vn,
                      aurorad_config *c)
{
    if (!strcmp(key, "order")) return get_int(px, vn, "codec.order", 1, 32, &c->codec.order);
    if (!strcmp(key, "equations"))
        return get_int(px, vn, "codec.equations", 1, 17, &c->codec.equations);
    if (!strcmp(key, "threshold"))
        return get_int(px, vn, "codec.threshold", 0, 1 << 30, &c->codec.threshold);
    if (!strcmp(key, "profile")) {
        const char *s = scalar(vn);
        int prof = s ? aurp_profile_from_name(s) : 0;
        if (!prof) return fail_at(px, vn, "codec.profile: unknown profile '%s'", s ? s : "");
        c->codec.profile = prof;
        return 0;
    }
    return fail_at(px, kn, "unknown key 'codec.%s' (known: order, equations, threshold, profile)",
                   key);
}

static int top_pair(parse_ctx *px, const char *key, yaml_node_t *kn, yaml_node_t *vn,
                    aurorad_config *c)
{
#define PATHKEY(k)                                                                                 \
    if (!strcmp(key, #k)) return get_path(px, vn, #k, c->k, sizeof c->k)
    PATHKEY(incoming_dir);
    PATHKEY(outbox_dir);
    PATHKEY(quarantine_dir);
    PATHKEY(state_dir);
#undef PATHKEY
    if (!strcmp(key, "done_dir")) {
        /* "done_dir:" with no value (null) = delete originals */
        const char *s = scalar(vn);
        if (s && (!*s || !strcmp(s, "~") || !strcmp(s, "null"))) {
            c->done_dir[0] = 0;
            return 0;
        }
        return get_path(px, vn, "done_dir", c->done_dir, sizeof c->done_dir);
    }
    if (!strcmp(key, "codec")) return each_pair(px, vn, "codec", codec_pair, c);
    if (!strcmp(key, "gpus")) return get_int(px, vn, "gpus", 0, CONFIG_MAX_GPUS, &c->gpus);
    if (!strcmp(key, "gpu_devices")) {
        if (vn->type != YAML_SEQUENCE_NODE)
            return fail_at(px, vn, "gpu_devices: expected a list of CUDA device numbers");
        c->ngpu_devices = 0;
        for (yaml_node_item_t *it = vn->data.sequence.items.start; it < vn->data.sequence.items.top;
             it++) {
            yaml_node_t *in = yaml_document_get_node(px->doc, *it);
            if (c->ngpu_devices == CONFIG_MAX_GPUS)
                return fail_at(px, in, "gpu_devices: more than %d devices", CONFIG_MAX_GPUS);
            int d;
            if (get_int(px, in, "gpu_devices[]", 0, 255, &d)) return -1;
            for (int i = 0; i < c->ngpu_devices; i++)
                if (c->gpu_devices[i] == d)
                    return fail_at(px, in, "gpu_devices: device %d listed twice", d);
            c->gpu_devices[c->ngpu_devices++] = d;
        }
        return 0;
    }
    if (!strcmp(key, "split")) {
        const char *s = scalar(vn);
        if (s && !strcmp(s, "columns")) c->split = SPLIT_COLUMNS;
        else if (s && !strcmp(s, "frames")) c->split = SPLIT_FRAMES;
        else return fail_at(px, vn, "split: expected 'columns' or 'frames'");
        return 0;
    }
    if (!strcmp(key, "cpu_workers")) return get_int_auto(px, vn, key, 0, 256, &c->cpu_workers);
    if (!strcmp(key, "cpu_threads")) return get_int_auto(px, vn, key, 1, 256, &c->cpu_threads);
    if (!strcmp(key, "max_in_flight")) return get_int_auto(px, vn, key, 1, 1024, &c->max_in_flight);
    if (!strcmp(key, "verify_workers")) return get_int_auto(px, vn, key, 1, 1024, &c->verify_workers);
    if (!strcmp(key, "budget_seconds"))
        return get_double(px, vn, key, 0.001, 86400, &c->budget_seconds);
    if (!strcmp(key, "verify")) return get_bool(px, vn, key, &c->verify);
    if (!strcmp(key, "settle_ms")) return get_int(px, vn, key, 0, 600000, &c->settle_ms);
    if (!strcmp(key, "stall_seconds")) return get_double(px, vn, key, 0.1, 86400, &c->stall_seconds);
    if (!strcmp(key, "rescan_seconds"))
        return get_double(px, vn, key, 0.05, 3600, &c->rescan_seconds);
    if (!strcmp(key, "retry_max_seconds"))
        return get_double(px, vn, key, 0.01, 86400, &c->retry_max_seconds);
    if (!strcmp(key, "gpu_retry_seconds"))
        return get_double(px, vn, key, 0.01, 86400, &c->gpu_retry_seconds);
    if (!strcmp(key, "max_frame_bytes"))
        return get_bytes(px, vn, key, 2880, 1ull << 40, &c->max_frame_bytes);
    if (!strcmp(key, "latency_window")) return get_int(px, vn, key, 1, 100000, &c->latency_window);
    if (!strcmp(key, "log_level")) {
        static const struct { const char *n; int v; } lv[] = {
            {"debug", LOG_DEBUG}, {"info", LOG_INFO}, {"notice", LOG_NOTICE},
            {"warning", LOG_WARNING}, {"err", LOG_ERR}, {"error", LOG_ERR}};
        const char *s = scalar(vn);
        for (size_t i = 0; s && i < sizeof lv / sizeof lv[0]; i++)
            if (!strcmp(s, lv[i].n)) {
                c->log_level = lv[i].v;
                return 0;
            }
        return fail_at(px, vn, "log_level: expected debug, info, notice, warning or error");
    }
    if (!strcmp(key, "log_prefix")) {
        const char *s = scalar(vn);
        if (s && !strcmp(s, "auto")) {
            c->log_prefix = LOG_PREFIX_AUTO;
            return 0;
        }
        bool b;
        if (parse_bool(s, &b)) return fail_at(px, vn, "log_prefix: expected auto, true or false");
        c->log_prefix = b ? LOG_PREFIX_ON : LOG_PREFIX_OFF;
        return 0;
    }
    if (!strcmp(key, "log_format")) {
        if (config_log_format_from_name(scalar(vn), &c->log_format))
            return fail_at(px, vn, "log_format: expected auto, json or text");
        return 0;
    }
    if (!strcmp(key, "outbox_names")) {
        const char *s = scalar(vn);
        if (s && !strcmp(s, "capture")) c->outbox_capture_names = true;
        else if (s && !strcmp(s, "plain")) c->outbox_capture_names = false;
        else return fail_at(px, vn, "outbox_names: expected capture or plain");
        return 0;
    }
    if (!strcmp(key, "outbox_group")) {
        const char *s = scalar(vn);
        if (s && (!strcmp(s, "~") || !strcmp(s, "null"))) s = "";
        if (!s || strlen(s) >= sizeof c->outbox_group || strpbrk(s, ": /"))
            return fail_at(px, vn, "outbox_group: expected a group name");
        snprintf(c->outbox_group, sizeof c->outbox_group, "%s", s);
        return 0;
    }
    if (!strcmp(key, "done_min_free")) return get_bytes(px, vn, key, 0, 1ull << 50, &c->done_min_free);
    if (!strcmp(key, "done_max_bytes")) return get_bytes(px, vn, key, 0, 1ull << 50, &c->done_max_bytes);
    if (!strcmp(key, "done_max_age_days"))
        return get_double(px, vn, key, 0, 36500, &c->done_max_age_days);
    if (!strcmp(key, "disk_warn_free")) return get_bytes(px, vn, key, 0, 1ull << 50, &c->disk_warn_free);
    if (!strcmp(key, "disk_reserve")) return get_bytes(px, vn, key, 0, 1ull << 50, &c->disk_reserve);
    if (!strcmp(key, "metrics_file")) {
        const char *s = scalar(vn);
        if (s && (!*s || !strcmp(s, "~") || !strcmp(s, "null"))) {
            c->metrics_file[0] = 0;
            return 0;
        }
        return get_path(px, vn, key, c->metrics_file, sizeof c->metrics_file);
    }
    return fail_at(px, kn, "unknown key '%s'", key);
}

/* "/a/./b/../c/" -> "/a/c": the lexical form, before any link is followed. */
static void normalize_path(const char *in, char *out, size_t len)
{
    char tmp[CONFIG_PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", in);
    size_t o = 0;
    out[0] = 0;
    char *save = NULL;
    for (char *part = strtok_r(tmp, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
        if (!strcmp(part, ".")) continue;
        if (!strcmp(part, "..")) {
            while (o > 0 && out[o - 1] != '/') o--;
            if (o > 0) o--;
            out[o] = 0;
            continue;
        }
        int n = snprintf(out + o, len - o, "/%s", part);
        if (n < 0 || (size_t)n >= len - o) break;
        o += (size_t)n;
    }
    if (!o) snprintf(out, len, "/");
}

/* 0: unrelated; 1: the same; 2: a inside b; 3: b inside a (paths normalized). */
static int path_relation(const char *a, const char *b)
{
    if (!strcmp(a, b)) return 1;
    size_t la = strlen(a), lb = strlen(b);
    if (!strcmp(b, "/") || (la > lb && !strncmp(a, b, lb) && a[lb] == '/')) return 2;
    if (!strcmp(a, "/") || (lb > la && !strncmp(a, b, la) && b[la] == '/')) return 3;
    return 0;
}

static const char *const dir_keys[] = {"incoming_dir", "outbox_dir", "quarantine_dir", "state_dir",
                                       "done_dir"};

static void dir_values(const aurorad_config *c, const char *dirs[5])
{
    dirs[0] = c->incoming_dir;
    dirs[1] = c->outbox_dir;
    dirs[2] = c->quarantine_dir;
    dirs[3] = c->state_dir;
    dirs[4] = c->done_dir;
}

static int relation_error(char *err, size_t len, const char *prefix, int rel, int i, int j,
                          const char *a, const char *b)
{
    if (rel == 1)
        snprintf(err, len, "%s%s and %s are the same directory (%s)", prefix, dir_keys[i],
                 dir_keys[j], a);
    else if (rel == 2)
        snprintf(err, len, "%s%s (%s) is inside %s (%s)", prefix, dir_keys[i], a, dir_keys[j], b);
    else
        snprintf(err, len, "%s%s (%s) is inside %s (%s)", prefix, dir_keys[j], b, dir_keys[i], a);
    return -1;
}

/* Checks that need the whole file: required keys, distinct directories. */
static int check_whole(parse_ctx *px, yaml_node_t *root, aurorad_config *c)
{
    static const char *required[] = {"incoming_dir", "outbox_dir", "quarantine_dir", "state_dir"};
    const char *vals[] = {c->incoming_dir, c->outbox_dir, c->quarantine_dir, c->state_dir};
    int rc = 0;
    for (int i = 0; i < 4; i++)
        if (!vals[i][0] && !has_key(px, root, required[i]))
            rc = fail_at(px, root, "missing required key '%s'", required[i]);
    const char *dirs[5];
    dir_values(c, dirs);
    char norm[5][CONFIG_PATH_MAX];
    for (int i = 0; i < 5; i++) normalize_path(dirs[i], norm[i], sizeof norm[i]);
    for (int i = 0; i < 5; i++)
        for (int j = i + 1; j < 5; j++) {
            if (!dirs[i][0] || !dirs[j][0]) continue;
            int rel = path_relation(norm[i], norm[j]);
            if (rel) {
                char prefix[CONFIG_PATH_MAX + 64], msg[3 * CONFIG_PATH_MAX];
                int n = snprintf(prefix, sizeof prefix, "%s:%zu:%zu: ", px->name,
                                 root->start_mark.line + 1, root->start_mark.column + 1);
                (void)n;
                relation_error(msg, sizeof msg, prefix, rel, i, j, norm[i], norm[j]);
                rc = add_error(px, msg);
            }
        }
    aurp_params d;
    aurp_params_for_profile(&d, c->codec.profile);
    if (c->codec.order < 0) c->codec.order = d.order;
    if (c->codec.equations < 0) c->codec.equations = d.equations;
    if (c->codec.threshold < 0) c->codec.threshold = d.threshold;
    aurp_error e;
    if (aurp_params_check(&c->codec, &e) != AURP_OK) rc = fail_at(px, root, "codec: %s", e.msg);
    if (c->ngpu_devices && c->gpus > c->ngpu_devices)
        rc = fail_at(px, root, "gpus: %d but gpu_devices lists only %d", c->gpus, c->ngpu_devices);
    return rc;
}

int config_parse_string(const char *text, size_t len, const char *name, aurorad_config *c,
                        char *err, size_t err_len)
{
    aurorad_config tmp;
    config_defaults(&tmp);
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) {
        snprintf(err, err_len, "%s: cannot initialise the YAML parser", name);
        return -1;
    }
    if (err_len) err[0] = 0;
    parse_ctx px = {name, &doc, err, err_len, 0};
    int tabs = report_indent_tabs(&px, text, len);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        /* the tab lines, already explained, are usually what the parser hit */
        if (!tabs)
            fail_at_mark(&px, parser.problem_mark.line, parser.problem_mark.column, "%s%s%s",
                         parser.problem ? parser.problem : "YAML error", parser.context ? " " : "",
                         parser.context ? parser.context : "");
        yaml_parser_delete(&parser);
        return -1;
    }
    int rc = tabs ? -1 : 0;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root) {
        if (!tabs) fail_at_mark(&px, 0, 0, "the file is empty");
        rc = -1;
    } else {
        if (each_pair(&px, root, "top level", top_pair, &tmp)) rc = -1;
        if (root->type == YAML_MAPPING_NODE && check_whole(&px, root, &tmp)) rc = -1;
    }
    /* A second document would be ignored silently: refuse it. */
    if (!rc) {
        yaml_document_t extra;
        if (yaml_parser_load(&parser, &extra)) {
            yaml_node_t *r2 = yaml_document_get_root_node(&extra);
            if (r2) rc = fail_at(&px, r2, "more than one YAML document");
            yaml_document_delete(&extra);
        }
    }
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    if (!rc) *c = tmp;
    return rc;
}

int config_load(const char *path, aurorad_config *c, char *err, size_t err_len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, err_len, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            if (cap >= (1u << 20)) {
                free(buf);
                fclose(f);
                snprintf(err, err_len, "%s: larger than 1 MiB, not a configuration file", path);
                return -1;
            }
            char *nb = realloc(buf, cap *= 2);
            if (!nb) free(buf);
            buf = nb;
        }
    }
    int rerr = ferror(f);
    fclose(f);
    if (!buf || rerr) {
        snprintf(err, err_len, "%s: cannot read: %s", path, buf ? "I/O error" : "out of memory");
        free(buf);
        return -1;
    }
    int rc = config_parse_string(buf, len, path, c, err, err_len);
    free(buf);
    return rc;
}

/* The real path of dir, or of its nearest existing parent followed by the
 * components that do not exist yet; st gets that existing directory. */
static int real_dir(const char *dir, char *out, size_t len, struct stat *st)
{
    char head[CONFIG_PATH_MAX], tail[CONFIG_PATH_MAX] = "";
    normalize_path(dir, head, sizeof head);
    for (;;) {
        char *r = realpath(head, NULL);
        if (r) {
            int ok = stat(r, st) == 0;
            snprintf(out, len, "%s%s%s", r, (tail[0] && strcmp(r, "/")) ? "/" : "", tail);
            free(r);
            return ok ? 0 : -1;
        }
        char *slash = strrchr(head, '/');
        if (!slash || slash == head) {
            if (stat("/", st) != 0) return -1;
            snprintf(out, len, "%s%s", head, "");
            return 0;
        }
        char t[CONFIG_PATH_MAX];
        snprintf(t, sizeof t, "%s%s%s", slash + 1, tail[0] ? "/" : "", tail);
        snprintf(tail, sizeof tail, "%s", t);
        *slash = 0;
    }
}

/* Whether the existing directory a (or one of its parents) is b, by device
 * and inode: a bind mount of b is caught here, not by the path. */
static bool inside_by_inode(const char *real_a, const struct stat *b)
{
    char p[CONFIG_PATH_MAX];
    snprintf(p, sizeof p, "%s", real_a);
    for (;;) {
        struct stat st;
        if (stat(p, &st) == 0 && st.st_dev == b->st_dev && st.st_ino == b->st_ino) return true;
        char *slash = strrchr(p, '/');
        if (!slash || slash == p) return false;
        *slash = 0;
    }
}

int config_check_dirs_on_disk(const aurorad_config *c, const char *name, char *err, size_t err_len)
{
    const char *dirs[5];
    dir_values(c, dirs);
    char real[5][CONFIG_PATH_MAX];
    struct stat st[5];
    bool exists[5];
    for (int i = 0; i < 5; i++) {
        exists[i] = false;
        if (!dirs[i][0]) continue;
        if (real_dir(dirs[i], real[i], sizeof real[i], &st[i]) != 0) {
            snprintf(real[i], sizeof real[i], "%s", dirs[i]);
            continue;
        }
        struct stat own;
        exists[i] = stat(dirs[i], &own) == 0;
        if (exists[i]) st[i] = own;
    }
    char prefix[CONFIG_PATH_MAX + 8];
    snprintf(prefix, sizeof prefix, "%s: ", name);
    for (int i = 0; i < 5; i++)
        for (int j = i + 1; j < 5; j++) {
            if (!dirs[i][0] || !dirs[j][0]) continue;
            int rel = path_relation(real[i], real[j]);
            if (!rel && exists[i] && exists[j]) {
                if (st[i].st_dev == st[j].st_dev && st[i].st_ino == st[j].st_ino) rel = 1;
                else if (inside_by_inode(real[i], &st[j])) rel = 2;
                else if (inside_by_inode(real[j], &st[i])) rel = 3;
            }
            if (rel) return relation_error(err, err_len, prefix, rel, i, j, real[i], real[j]);
        }
    return 0;
}

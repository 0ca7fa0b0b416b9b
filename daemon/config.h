/* aurorad configuration: one YAML file, parsed with libyaml.
 *
 * Every error names the file, the line and the column of the offending node
 * ("FILE:LINE:COL: reason"); unknown and duplicate keys are errors, so a typo
 * never silently falls back to a default on an unattended station.
 */
#ifndef AURORAD_CONFIG_H
#define AURORAD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aurp.h"

#define CONFIG_PATH_MAX 1024
#define CONFIG_MAX_GPUS 16

typedef enum { SPLIT_COLUMNS = 0, SPLIT_FRAMES = 1 } config_split;
typedef enum { LOG_PREFIX_AUTO = 0, LOG_PREFIX_ON = 1, LOG_PREFIX_OFF = 2 } config_log_prefix;
/* auto: readable text when stderr is a terminal, JSON otherwise (journald, files) */
typedef enum { LOG_FORMAT_AUTO = 0, LOG_FORMAT_JSON = 1, LOG_FORMAT_TEXT = 2 } config_log_format;

typedef struct {
    /* directories (done_dir empty: originals are deleted after commit) */
    char incoming_dir[CONFIG_PATH_MAX];
    char outbox_dir[CONFIG_PATH_MAX];
    char done_dir[CONFIG_PATH_MAX];
    char quarantine_dir[CONFIG_PATH_MAX];
    char state_dir[CONFIG_PATH_MAX];
    /* codec */
    aurp_params codec;
    /* devices and workers */
    int gpus;                       /* 0 = CPU only */
    int gpu_devices[CONFIG_MAX_GPUS]; /* explicit CUDA ordinals, ngpu_devices of them */
    int ngpu_devices;
    config_split split;
    int cpu_workers;                /* -1 = auto */
    int cpu_threads;                /* threads per CPU-encoded frame, -1 = auto */
    int max_in_flight;              /* -1 = auto (encoders + verify workers) */
    int verify_workers;             /* threads of the verify pool, -1 = auto (every core) */
    /* frame handling */
    double budget_seconds;
    bool verify;
    int settle_ms;                  /* size unchanged this long => complete */
    double stall_seconds;           /* incomplete and unchanged this long => broken */
    double rescan_seconds;          /* periodic directory rescan */
    double retry_max_seconds;       /* cap of the outbox-fault backoff */
    double gpu_retry_seconds;       /* a failed GPU is tried again after this */
    uint64_t max_frame_bytes;       /* larger files are quarantined before being read */
    /* logging and status */
    int log_level;                  /* syslog priority: LOG_ERR..LOG_DEBUG */
    config_log_prefix log_prefix;
    config_log_format log_format;
    int latency_window;             /* frames in the STATUS latency window */
    /* transmission contract (docs/OPERATIONS.md section 12) */
    bool outbox_capture_names;      /* outbox_names: capture (default) or plain */
    char outbox_group[64];          /* may read and remove outbox files; "" = the daemon's group */
    /* disk (retention.c): 0 = that rule is off */
    uint64_t done_min_free;         /* remove oldest originals while done_dir's disk has less free */
    uint64_t done_max_bytes;        /* remove oldest originals while done_dir holds more */
    double done_max_age_days;       /* remove originals older than this */
    uint64_t disk_warn_free;        /* disk_low warnings below this free (and at each halving) */
    uint64_t disk_reserve;          /* below this free on the outbox's disk packing pauses */
    /* visibility */
    char metrics_file[CONFIG_PATH_MAX]; /* node_exporter textfile; "" = none */
} aurorad_config;

void config_defaults(aurorad_config *c);

/* Parses FILE into *c (defaults first).  On error returns -1 with
 * "FILE:LINE:COL: reason" in err. */
int config_load(const char *path, aurorad_config *c, char *err, size_t err_len);

/* Same, from a string; name stands for the file in messages. */
int config_parse_string(const char *text, size_t len, const char *name, aurorad_config *c,
                        char *err, size_t err_len);


const char *config_split_name(config_split s);

/* "auto", "json", "text" -> *f; -1 for anything else. */
int config_log_format_from_name(const char *s, config_log_format *f);

#define CONFIG_DEFAULT_MAX_FRAME_BYTES (256ull << 20)

/* Checks on the real file system that no two configured directories are
 * the same directory or one inside the other: by real path (symbolic
 * links, "." and "..") and by device and inode (bind mounts).  Directories
 * that do not exist yet are judged by their nearest existing parent.
 * Returns -1 with "FILE: incoming_dir and outbox_dir ..." in err. */
int config_check_dirs_on_disk(const aurorad_config *c, const char *name, char *err, size_t err_len);

#endif

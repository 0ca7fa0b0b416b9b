/* The inputs of a bulk command: operands, --files-from lists and
 * directories (a year of names neither fits an argument list nor a glob). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

static int add(cli_inputs *in, const char *path, const char *rel)
{
    if (in->n == in->cap) {
        size_t cap = in->cap ? 2 * in->cap : 256;
        cli_input *bigger = realloc(in->items, cap * sizeof *bigger);
        if (!bigger) return -1;
        in->items = bigger;
        in->cap = cap;
    }
    cli_input *it = &in->items[in->n];
    it->path = strdup(path);
    it->rel = strdup(rel);
    if (!it->path || !it->rel) {
        free(it->path);
        free(it->rel);
        return -1;
    }
    in->n++;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds the files under dir whose names end in suffix, depth first in name
 * order; rel_prefix is dir's path below the operand ("" at the top). */
static int walk(const char *cmd, const char *dir, const char *rel_prefix, const char *suffix,
                cli_inputs *in, int depth)
{
    if (depth > 64) {
        fprintf(stderr, "aurorapack %s: %s: directories nested too deep\n", cmd, dir);
        return -1;
    }
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "aurorapack %s: %s: cannot read the directory: %s\n", cmd, dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || e->d_name[0] == '.') continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **bigger = realloc(names, cap * sizeof *bigger);
            if (!bigger) { rc = -1; break; }
            names = bigger;
        }
        if (!(names[n] = strdup(e->d_name))) { rc = -1; break; }
        n++;
    }
    closedir(d);
    if (rc == 0) qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n && rc == 0; i++) {
        size_t plen = strlen(dir) + strlen(names[i]) + 2, rlen = strlen(rel_prefix) + strlen(names[i]) + 2;
        char *path = malloc(plen), *rel = malloc(rlen);
        if (!path || !rel) {
            rc = -1;
        } else {
            snprintf(path, plen, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", names[i]);
            snprintf(rel, rlen, "%s%s%s", rel_prefix, *rel_prefix ? "/" : "", names[i]);
            struct stat st;
            /* links are not followed into directories: a loop cannot trap the walk */
            if (lstat(path, &st) != 0) {
                fprintf(stderr, "aurorapack %s: %s: %s\n", cmd, path, strerror(errno));
                rc = -1;
            } else if (S_ISDIR(st.st_mode)) {
                rc = walk(cmd, path, rel, suffix, in, depth + 1);
            } else if (cli_ends_with(names[i], suffix)) {
                rc = add(in, path, rel) == 0 ? 0 : -1;
            }
        }
        free(path);
        free(rel);
    }
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    return rc;
}

static int add_operand(const char *cmd, const char *arg, const char *suffix, cli_inputs *in)
{
    struct stat st;
    if (strcmp(arg, "-") != 0 && stat(arg, &st) == 0 && S_ISDIR(st.st_mode))
        return walk(cmd, arg, "", suffix, in, 0);
    /* a plain file (or a missing one: reading it reports that, per file) */
    const char *slash = strrchr(arg, '/');
    if (add(in, arg, slash ? slash + 1 : arg) != 0) {
        fprintf(stderr, "aurorapack %s: out of memory for the list of inputs\n", cmd);
        return -1;
    }
    return 0;
}

int cli_collect_inputs(const char *cmd, const cli_options *o, const char *suffix, cli_inputs *out)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < o->nfiles; i++)
        if (add_operand(cmd, o->files[i], suffix, out) != 0) goto fail;
    if (o->files_from) {
        int from_stdin = !strcmp(o->files_from, "-");
        FILE *f = from_stdin ? stdin : fopen(o->files_from, "r");
        if (!f) {
            fprintf(stderr, "aurorapack %s: --files-from %s: %s\n", cmd, o->files_from, strerror(errno));
            goto fail;
        }
        char *line = NULL;
        size_t cap = 0;
        ssize_t len;
        int rc = 0;
        while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
            while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
            if (len == 0) continue;
            rc = add_operand(cmd, line, suffix, out);
        }
        int read_error = ferror(f);
        free(line);
        if (!from_stdin) fclose(f);
        if (rc != 0) goto fail;
        if (read_error) {
            fprintf(stderr, "aurorapack %s: --files-from %s: read error\n", cmd, o->files_from);
            goto fail;
        }
    }
    if (out->n == 0) {
        fprintf(stderr, "aurorapack %s: no input file (no %s file found)\n", cmd, suffix);
        goto fail;
    }
    return 0;
fail:
    cli_inputs_free(out);
    return -1;
}

void cli_inputs_free(cli_inputs *in)
{
    for (size_t i = 0; i < in->n; i++) {
        free(in->items[i].path);
        free(in->items[i].rel);
    }
    free(in->items);
    memset(in, 0, sizeof *in);
}

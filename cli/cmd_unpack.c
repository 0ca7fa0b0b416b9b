/* aurorapack unpack: FILE.aurp -> FILE (or -o OUT), checksum verified,
 * written atomically. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "frame.h"

static int unpack_one(const char *path, const cli_options *o)
{
    char err[1024], out_buf[4096];
    const char *out = o->out;
    if (!out) {
        if (!cli_ends_with(path, AURP_EXTENSION) || strlen(path) == strlen(AURP_EXTENSION)) {
            fprintf(stderr, "aurorapack unpack: %s: name does not end in %s (use -o OUT)\n", path,
                    AURP_EXTENSION);
            return -1;
        }
        snprintf(out_buf, sizeof out_buf, "%.*s", (int)(strlen(path) - strlen(AURP_EXTENSION)), path);
        out = out_buf;
    }
    if (!o->force && cli_exists(out)) {
        fprintf(stderr, "aurorapack unpack: %s: %s already exists (use -f to overwrite)\n", path, out);
        return -1;
    }
    uint8_t *packed, *data = NULL;
    size_t plen, len = 0;
    if (cli_read_file(path, &packed, &plen, err, sizeof err)) {
        fprintf(stderr, "aurorapack unpack: %s\n", err);
        return -1;
    }
    aurp_error ae = {{0}};
    aurp_status st = frame_unpack(packed, plen, o->threads, &data, &len, &ae);
    free(packed);
    if (st != AURP_OK) {
        fprintf(stderr, "aurorapack unpack: %s: cannot unpack: %s: %s\n", path, aurp_status_name(st),
                ae.msg);
        return -1;
    }
    int rc = cli_write_atomic(out, data, len, o->force, err, sizeof err);
    if (rc) fprintf(stderr, "aurorapack unpack: %s: %s\n", path, err);
    else if (!o->quiet) printf("%s -> %s: %zu bytes, checksum OK\n", path, out, len);
    free(data);
    return rc;
}

int cmd_unpack(int argc, char **argv)
{
    cli_options o;
    if (cli_parse("unpack", argc, argv, "tfoq", &o)) return EXIT_USAGE;
    int failed = 0;
    for (int i = 0; i < o.nfiles; i++) failed += unpack_one(o.files[i], &o) != 0;
    return failed ? EXIT_FILE_ERROR : 0;
}

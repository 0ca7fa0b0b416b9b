/* aurorapack verify: decode every file and check size and checksum without
 * keeping the output (chunk by chunk, hashed as it comes); one line per
 * file, exit 0 only if all are intact. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The XXH3-64 of the original in a stream's header (FORMAT.md section 1),
 * which a successful decode has just matched. */
static uint64_t header_checksum(const uint8_t *stream)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | stream[24 + i];
    return v;
}

int cmd_verify(int argc, char **argv)
{
    cli_options o;
    if (cli_parse("verify", argc, argv, "tqFL", &o)) return EXIT_USAGE;
    cli_inputs in;
    if (cli_collect_inputs("verify", &o, AURP_EXTENSION, &in) != 0) return EXIT_FILE_ERROR;
    int failed = 0;
    for (size_t i = 0; i < in.n; i++) {
        const char *path = in.items[i].path;
        char err[1024];
        uint8_t *packed;
        size_t plen;
        int rd = cli_read_input(path, &packed, &plen, err, sizeof err);
        if (rd) {
            /* err is "PATH: reason": the line names the path once */
            size_t n = strlen(path);
            const char *reason = strncmp(err, path, n) == 0 && err[n] == ':' ? err + n + 2 : err;
            printf("%s: FAILED: %s\n", path, reason);
            failed++;
            continue;
        }
        aurp_error ae = {{0}};
        uint64_t restored = 0, checksum = 0;
        aurp_status st = aurp_unpack_chunks(packed, plen, o.threads, o.max_output, NULL, NULL,
                                            &restored, &ae);
        if (st == AURP_OK) checksum = header_checksum(packed);
        if (st != AURP_OK) {
            printf("%s: FAILED: %s: %s\n", path, aurp_status_name(st), ae.msg);
            failed++;
        } else {
            /* verified equal to the XXH3-64 of the restored bytes */
            printf("%s: OK (%llu bytes restored, XXH3-64 %016llx)\n", path,
                   (unsigned long long)restored, (unsigned long long)checksum);
        }
        free(packed);
    }
    fflush(stdout);
    cli_inputs_free(&in);
    return failed ? EXIT_FILE_ERROR : 0;
}

/* aurorapack verify: decode every file in memory and check size and
 * checksum; one line per file, exit 0 only if all are intact. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "frame.h"

int cmd_verify(int argc, char **argv)
{
    cli_options o;
    if (cli_parse("verify", argc, argv, "tq", &o)) return EXIT_USAGE;
    int failed = 0;
    for (int i = 0; i < o.nfiles; i++) {
        const char *path = o.files[i];
        char err[1024];
        uint8_t *packed, *data = NULL;
        size_t plen, len = 0;
        if (cli_read_file(path, &packed, &plen, err, sizeof err)) {
            /* err is "PATH: reason": the line names the path once */
            size_t n = strlen(path);
            const char *reason = strncmp(err, path, n) == 0 && err[n] == ':' ? err + n + 2 : err;
            printf("%s: FAILED: %s\n", path, reason);
            failed++;
            continue;
        }
        aurp_error ae = {{0}};
        aurp_status st = frame_unpack(packed, plen, o.threads, &data, &len, &ae);
        if (st != AURP_OK) {
            printf("%s: FAILED: %s: %s\n", path, aurp_status_name(st), ae.msg);
            failed++;
        } else {
            printf("%s: OK (%zu bytes restored, XXH3-64 %016llx)\n", path, len,
                   (unsigned long long)aurp_checksum(data, len));
        }
        free(packed);
        free(data);
    }
    fflush(stdout);
    return failed ? EXIT_FILE_ERROR : 0;
}

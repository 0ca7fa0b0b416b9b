/* aurorapack: pack, unpack, verify, inspect and benchmark .aurp files. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *to)
{
    fprintf(to,
            "aurorapack %s: lossless compression of 16-bit spectrograph FITS frames\n"
            "usage:\n"
            "  aurorapack pack   [-N n] [-M m] [-T t] [--profile NAME] [--threads K]\n"
            "                    [--gpu LIST|all [--gpu-fallback] | --cpu] [--any] [-f] [-o OUT] FILE...\n"
            "  aurorapack unpack [-j N] [--threads K] [--max-output SIZE] [-f] [-q]\n"
            "                    [-o OUT|-o -|-C DIR] [--files-from LIST] FILE.aurp|DIR|-...\n"
            "  aurorapack verify [--threads K] [--max-output SIZE] [--files-from LIST] FILE.aurp|DIR|-...\n"
            "  aurorapack info   [--json] [--files-from LIST] FILE.aurp|DIR|-...\n"
            "  aurorapack bench  [--gpu LIST|--cpu] [--repeat R] [-N -M -T] FILE.fits...\n"
            "  aurorapack --help | --version\n"
            "Exit status: 0 every file done, 1 a file failed, 2 usage error.\n"
            "See docs/CLI.md.\n",
            AURORAPACK_VERSION);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    cli_init_umask(); /* before any thread: umask() is process-wide */
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("aurorapack %s (stream format %d)\n", AURORAPACK_VERSION, AURP_FORMAT_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "pack")) return cmd_pack(argc - 1, argv + 1);
    if (!strcmp(cmd, "unpack")) return cmd_unpack(argc - 1, argv + 1);
    if (!strcmp(cmd, "verify")) return cmd_verify(argc - 1, argv + 1);
    if (!strcmp(cmd, "info")) return cmd_info(argc - 1, argv + 1);
    if (!strcmp(cmd, "bench")) return cmd_bench(argc - 1, argv + 1);
    fprintf(stderr, "aurorapack: unknown command '%s'\n", cmd);
    usage(stderr);
    return EXIT_USAGE;
}

/* sha256.c: the outbox sidecars' checksum must be the one sha256sum
 * computes, for the FIPS 180-4 vectors and for every length around the
 * 64-byte block and the 56-byte padding edge. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scratch_dir.h"
#include "sha256.h"

TestSuite(daemon_sha256, .init = scratch_dir_make, .fini = scratch_dir_remove);

static void expect_hex(const char *msg, size_t len, const char *want)
{
    char hex[SHA256_HEX_LEN + 1];
    sha256_hex(msg, len, hex);
    cr_assert_str_eq(hex, want);
}

Test(daemon_sha256, fips_180_vectors)
{
    expect_hex("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect_hex("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    expect_hex(two, strlen(two), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

/* sha256sum's answer for the first len bytes of buf */
static void sha256sum_of(const unsigned char *buf, size_t len, char hex[SHA256_HEX_LEN + 1])
{
    char path[128], cmd[256];
    snprintf(path, sizeof path, "%s/data", scratch_dir);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(buf, 1, len, f), len);
    fclose(f);
    snprintf(cmd, sizeof cmd, "sha256sum %s", path);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    cr_assert_eq(fscanf(p, "%64s", hex), 1);
    cr_assert_eq(pclose(p), 0);
}

Test(daemon_sha256, agrees_with_sha256sum_at_every_block_edge)
{
    enum { MAX = 1 << 20 };
    unsigned char *buf = malloc(MAX);
    cr_assert_not_null(buf);
    unsigned x = 12345;
    for (size_t i = 0; i < MAX; i++) buf[i] = (unsigned char)((x = x * 1103515245u + 12345u) >> 24);
    static const size_t lens[] = {1, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000, MAX};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        char ours[SHA256_HEX_LEN + 1], theirs[SHA256_HEX_LEN + 1];
        sha256_hex(buf, lens[i], ours);
        sha256sum_of(buf, lens[i], theirs);
        cr_assert_str_eq(ours, theirs, "length %zu", lens[i]);
    }
    free(buf);
}

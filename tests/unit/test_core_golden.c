/* Golden streams (tests/golden/, written once by generate.sh): each must
 * decode to its original, whose XXH3-64 is in the MANIFEST, and packing the
 * original again must give the very same bytes.  Any change to the format
 * or to the prediction arithmetic fails here.  Streams of earlier encoders
 * (MANIFEST.old) must still decode. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aurp.h"
#include "core_fitshdr.h"

static const char *golden_dir(void)
{
    const char *d = getenv("AURP_GOLDEN_DIR");
    return d && *d ? d : "tests/golden"; /* tests run from the repository root */
}

static uint8_t *load(const char *name, const char *ext, size_t *len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s%s", golden_dir(), name, ext);
    uint8_t *b = core_read_file(path, len);
    cr_assert(b, "%s: cannot read (run from the repository root or set AURP_GOLDEN_DIR)", path);
    return b;
}

Test(core_golden, streams_decode_and_reencode_identically)
{
    char mpath[4096];
    snprintf(mpath, sizeof mpath, "%s/MANIFEST", golden_dir());
    FILE *m = fopen(mpath, "r");
    cr_assert(m, "%s: cannot open (run from the repository root or set AURP_GOLDEN_DIR)", mpath);
    char name[64], profile[16];
    unsigned long long off, sum;
    unsigned w, h;
    int N, M, T, cases = 0;
    int seen[3] = {0};
    while (fscanf(m, "%63s %15s %llu %u %u %d %d %d %llx", name, profile, &off, &w, &h, &N, &M, &T, &sum) == 9) {
        int prof = aurp_profile_from_name(profile);
        cr_assert(prof > 0 && prof < 3, "%s: unknown profile %s", name, profile);
        seen[prof]++;
        size_t olen, plen, blen;
        uint8_t *orig = load(name, ".orig", &olen), *packed = load(name, ".aurp", &plen);
        cr_assert_eq(aurp_checksum(orig, olen), sum, "%s.orig does not match its MANIFEST checksum", name);
        uint8_t *back = malloc(olen + 1);
        aurp_error err = {{0}};
        for (int threads = 1; threads <= 3; threads += 2) {
            cr_assert_eq(aurp_unpack(packed, plen, threads, back, olen, &blen, &err), AURP_OK, "%s: %s", name,
                         err.msg);
            cr_assert(blen == olen && memcmp(back, orig, olen) == 0, "%s: decodes to other bytes", name);
        }
        aurp_region r = {off, w, h};
        aurp_params p = {prof, N, M, T};
        size_t cap = aurp_pack_bound(olen), len;
        uint8_t *again = malloc(cap);
        cr_assert_eq(aurp_pack(orig, olen, &r, w ? 1 : 0, &p, NULL, 2, again, cap, &len, &err), AURP_OK,
                     "%s: %s", name, err.msg);
        cr_assert(len == plen && memcmp(again, packed, plen) == 0,
                  "%s: packing the original gives other bytes (%zu vs %zu): the format, the "
                  "arithmetic or the encoder's choices changed",
                  name, len, plen);
        free(again);
        free(back);
        free(orig);
        free(packed);
        cases++;
    }
    fclose(m);
    cr_assert_geq(cases, 9, "only %d golden cases in %s", cases, mpath);
    cr_assert(seen[AURP_PROFILE_PAPER] >= 5 && seen[AURP_PROFILE_LSMIX] >= 4, "golden cases: %d paper, %d lsmix",
              seen[AURP_PROFILE_PAPER], seen[AURP_PROFILE_LSMIX]);
}

Test(core_golden, streams_of_earlier_encoders_still_decode)
{
    char mpath[4096];
    snprintf(mpath, sizeof mpath, "%s/MANIFEST.old", golden_dir());
    FILE *m = fopen(mpath, "r");
    cr_assert(m, "%s: cannot open", mpath);
    char line[256], stream[64], orig[64];
    unsigned long long sum;
    int cases = 0;
    while (fgets(line, sizeof line, m)) {
        if (line[0] == '#' || sscanf(line, "%63s %63s %llx", stream, orig, &sum) != 3) continue;
        size_t olen, plen, blen;
        uint8_t *o = load(orig, ".orig", &olen);
        char sname[64];
        snprintf(sname, sizeof sname, "%.*s", (int)(strlen(stream) - 5), stream); /* without .aurp */
        uint8_t *packed = load(sname, ".aurp", &plen);
        cr_assert_eq(aurp_checksum(o, olen), sum, "%s.orig does not match MANIFEST.old", orig);
        uint8_t *back = malloc(olen + 1);
        aurp_error err = {{0}};
        cr_assert_eq(aurp_unpack(packed, plen, 2, back, olen, &blen, &err), AURP_OK, "%s: %s", stream, err.msg);
        cr_assert(blen == olen && memcmp(back, o, olen) == 0, "%s: decodes to other bytes", stream);
        free(back);
        free(o);
        free(packed);
        cases++;
    }
    fclose(m);
    cr_assert_geq(cases, 5, "only %d earlier streams in %s", cases, mpath);
}

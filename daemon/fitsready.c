#include "fitsready.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK 2880
#define CARD 80
#define MAX_HEADER_BLOCKS 1000 /* a 2.9 MB header is not a station frame */

static void set(fitsready_result *r, fitsready_state s, const char *why)
{
    r->state = s;
    snprintf(r->why, sizeof r->why, "%s", why);
}

/* Integer value of a card "KEYWORD = value", or false when absent/bad. */
static bool card_int(const char *card, long long *v)
{
    if (card[8] != '=' || card[9] != ' ') return false;
    char val[72];
    memcpy(val, card + 10, 70);
    val[70] = 0;
    char *slash = strchr(val, '/');
    if (slash) *slash = 0;
    char *end;
    errno = 0;
    long long x = strtoll(val, &end, 10);
    if (errno || end == val) return false;
    while (*end == ' ') end++;
    if (*end) return false;
    *v = x;
    return true;
}

static bool key_is(const char *card, const char *key)
{
    size_t n = strlen(key);
    if (memcmp(card, key, n) != 0) return false;
    for (size_t i = n; i < 8; i++)
        if (card[i] != ' ') return false;
    return true;
}

void fitsready_check_fd(int fd, uint64_t size, fitsready_result *r)
{
    memset(r, 0, sizeof *r);
    uint64_t pos = 0;
    char block[BLOCK];
    for (int hdu = 0;; hdu++) {
        if (hdu > 0 && pos == size) {
            set(r, FITSREADY_COMPLETE, "complete");
            r->needed = pos;
            return;
        }
        long long bitpix = 0, naxis = -1, pcount = 0, gcount = 1, axes_prod = 1;
        long long naxes_seen = 0;
        bool ended = false;
        for (int b = 0; !ended; b++) {
            if (b >= MAX_HEADER_BLOCKS) {
                set(r, FITSREADY_BROKEN, "header without END in the first 1000 blocks");
                return;
            }
            uint64_t avail = size > pos ? size - pos : 0;
            size_t want = avail < BLOCK ? (size_t)avail : BLOCK;
            ssize_t got = want ? pread(fd, block, want, (off_t)pos) : 0;
            if (got < 0) {
                snprintf(r->why, sizeof r->why, "read: %s", strerror(errno));
                r->state = FITSREADY_INCOMPLETE;
                return;
            }
            /* Validate what is there even when incomplete, so garbage is
             * recognised early and not waited for. */
            if (b == 0) {
                const char *first = hdu == 0 ? "SIMPLE  =" : "XTENSION=";
                size_t cmp = (size_t)got < 9 ? (size_t)got : 9;
                if (memcmp(block, first, cmp) != 0) {
                    if (hdu == 0) {
                        set(r, FITSREADY_BROKEN, "not FITS: no SIMPLE card at the start");
                        return;
                    }
                    /* bytes after the last HDU that do not start an extension:
                     * the structure is complete; frame/ judges the rest */
                    set(r, FITSREADY_COMPLETE, "complete (trailing bytes)");
                    r->needed = pos;
                    return;
                }
            }
            if ((size_t)got < BLOCK) {
                r->needed = pos + BLOCK;
                r->nhdus = hdu;
                set(r, FITSREADY_INCOMPLETE, "header incomplete");
                return;
            }
            for (int c = 0; c < BLOCK / CARD; c++) {
                const char *card = block + c * CARD;
                long long v;
                if (key_is(card, "END")) {
                    ended = true;
                    break;
                }
                if (key_is(card, "BITPIX") && card_int(card, &v)) bitpix = v;
                else if (key_is(card, "NAXIS") && card_int(card, &v)) naxis = v;
                else if (key_is(card, "PCOUNT") && card_int(card, &v)) pcount = v;
                else if (key_is(card, "GCOUNT") && card_int(card, &v)) gcount = v;
                else if (!memcmp(card, "NAXIS", 5) && card[5] >= '1' && card[5] <= '9' &&
                         card_int(card, &v)) {
                    if (v < 0 || (v > 0 && axes_prod > (1LL << 40) / v)) {
                        set(r, FITSREADY_BROKEN, "absurd NAXISn value");
                        return;
                    }
                    axes_prod *= v;
                    naxes_seen++;
                }
            }
            pos += BLOCK;
        }
        if (bitpix != 8 && bitpix != 16 && bitpix != 32 && bitpix != 64 && bitpix != -32 &&
            bitpix != -64) {
            set(r, FITSREADY_BROKEN, "header without a valid BITPIX");
            return;
        }
        if (naxis < 0 || naxis > 999 || naxes_seen < naxis) {
            set(r, FITSREADY_BROKEN, "header without valid NAXIS/NAXISn");
            return;
        }
        if (pcount < 0 || gcount < 0) {
            set(r, FITSREADY_BROKEN, "negative PCOUNT or GCOUNT");
            return;
        }
        long long elems = naxis == 0 ? 0 : gcount * (pcount + axes_prod);
        uint64_t data = (uint64_t)elems * (uint64_t)(bitpix < 0 ? -bitpix : bitpix) / 8;
        pos += (data + BLOCK - 1) / BLOCK * BLOCK;
        r->nhdus = hdu + 1;
        r->needed = pos;
        if (size < pos) {
            set(r, FITSREADY_INCOMPLETE, "data incomplete");
            return;
        }
    }
}

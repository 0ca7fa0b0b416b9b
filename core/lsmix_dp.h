/* The arithmetic of the encoder's DP context candidate (lsmix_thresholds.c)
 * that the GPU encoder's DP kernels (gpu/lsmix_dp_kernels.cu) run as well:
 * code lengths in Q20 bits from a fixed log2 table, a run's cost from its
 * counts, one cell of the optimal-cut recurrence, the classes of a cut.
 * Integer only, one definition for both backends, so that the same
 * histogram gives the same contexts on the CPU and on every GPU.  The loops
 * around these atoms differ: the CPU runs the starts of a cost table on
 * threads over sparse items, the GPU a block per start over dense ones. */
#ifndef AURP_LSMIX_DP_H
#define AURP_LSMIX_DP_H

#include <stdint.h>

#include "hostdev.h"

/* log2(1 + i/256) in Q28, i = 0..256 (round(2^28 log2(1 + i/256))); the
 * device has its own copy (nvcc compiles these functions for both sides) */
#define LSX_DP_LOG2_TAB { \
    0u, 1509828u, 3013793u, 4511940u, 6004314u, 7490959u, 8971919u, 10447237u, \
    11916956u, 13381118u, 14839766u, 16292940u, 17740682u, 19183032u, 20620030u, 22051715u, \
    23478128u, 24899305u, 26315287u, 27726110u, 29131812u, 30532430u, 31928001u, 33318561u, \
    34704146u, 36084791u, 37460531u, 38831401u, 40197436u, 41558670u, 42915135u, 44266866u, \
    45613895u, 46956255u, 48293979u, 49627097u, 50955642u, 52279645u, 53599137u, 54914148u, \
    56224710u, 57530851u, 58832602u, 60129992u, 61423050u, 62711804u, 63996285u, 65276519u, \
    66552535u, 67824361u, 69092023u, 70355549u, 71614967u, 72870302u, 74121581u, 75368830u, \
    76612075u, 77851341u, 79086655u, 80318041u, 81545524u, 82769128u, 83988879u, 85204800u, \
    86416915u, 87625248u, 88829823u, 90030663u, 91227790u, 92421229u, 93611001u, 94797129u, \
    95979635u, 97158542u, 98333871u, 99505643u, 100673881u, 101838605u, 102999837u, 104157597u, \
    105311906u, 106462785u, 107610254u, 108754333u, 109895043u, 111032402u, 112166430u, 113297148u, \
    114424574u, 115548727u, 116669626u, 117787291u, 118901739u, 120012990u, 121121061u, 122225970u, \
    123327736u, 124426377u, 125521909u, 126614351u, 127703720u, 128790034u, 129873309u, 130953562u, \
    132030810u, 133105070u, 134176359u, 135244692u, 136310086u, 137372557u, 138432121u, 139488794u, \
    140542592u, 141593531u, 142641625u, 143686890u, 144729341u, 145768994u, 146805864u, 147839964u, \
    148871311u, 149899919u, 150925802u, 151948974u, 152969450u, 153987244u, 155002371u, 156014843u, \
    157024676u, 158031882u, 159036475u, 160038469u, 161037877u, 162034713u, 163028990u, 164020720u, \
    165009917u, 165996594u, 166980764u, 167962439u, 168941631u, 169918354u, 170892620u, 171864441u, \
    172833830u, 173800798u, 174765358u, 175727521u, 176687300u, 177644705u, 178599750u, 179552446u, \
    180502803u, 181450834u, 182396550u, 183339963u, 184281082u, 185219920u, 186156488u, 187090796u, \
    188022855u, 188952677u, 189880271u, 190805649u, 191728821u, 192649798u, 193568590u, 194485207u, \
    195399659u, 196311958u, 197222112u, 198130132u, 199036029u, 199939811u, 200841489u, 201741072u, \
    202638571u, 203533994u, 204427352u, 205318654u, 206207910u, 207095128u, 207980318u, 208863489u, \
    209744651u, 210623813u, 211500983u, 212376171u, 213249385u, 214120635u, 214989930u, 215857277u, \
    216722687u, 217586166u, 218447725u, 219307371u, 220165114u, 221020961u, 221874920u, 222727001u, \
    223577211u, 224425558u, 225272052u, 226116699u, 226959507u, 227800486u, 228639642u, 229476984u, \
    230312520u, 231146256u, 231978202u, 232808364u, 233636750u, 234463369u, 235288226u, 236111331u, \
    236932689u, 237752310u, 238570199u, 239386365u, 240200814u, 241013554u, 241824592u, 242633935u, \
    243441591u, 244247565u, 245051865u, 245854499u, 246655472u, 247454792u, 248252466u, 249048500u, \
    249842902u, 250635677u, 251426832u, 252216375u, 253004311u, 253790647u, 254575390u, 255358546u, \
    256140122u, 256920123u, 257698556u, 258475428u, 259250745u, 260024512u, 260796737u, 261567425u, \
    262336582u, 263104214u, 263870328u, 264634930u, 265398025u, 266159619u, 266919718u, 267678329u, \
    268435456u, \
}
static const uint32_t lsx_dp_log2_tab[257] = LSX_DP_LOG2_TAB;
#ifdef __CUDACC__
static __device__ const uint32_t lsx_dp_log2_tab_dev[257] = LSX_DP_LOG2_TAB;
#endif

/* c log2 c in Q20 bits: log2 from the table, interpolated linearly over the
 * 24 bits below its 8 (error < 3e-6 bits), integer only. */
static inline AURP_HD uint64_t lsx_dp_xlogx(uint64_t c)
{
    if (c < 2) return 0;
#ifdef __CUDA_ARCH__
    const uint32_t *tab = lsx_dp_log2_tab_dev;
    int e = 63 - __clzll((long long)c);
#else
    const uint32_t *tab = lsx_dp_log2_tab;
    int e = 63 - __builtin_clzll(c);
#endif
    uint64_t m = c << (63 - e); /* the leading one at bit 63 */
    uint32_t i = (uint32_t)(m >> 55) & 255, f = (uint32_t)(m >> 31) & 0xffffff;
    uint64_t l = ((uint64_t)e << 28) + tab[i] + (((uint64_t)(tab[i + 1] - tab[i]) * f) >> 24);
    return c * (l >> 8);
}

/* The cost of one group of a run: the static code length of its tokens,
 * n log2 n - sum c log2 c (cnt = n, s = the sum of c log2 c), plus the
 * learning charge for each of the `used` tokens it codes. */
static inline AURP_HD uint64_t lsx_dp_group_cost(uint64_t cnt, uint64_t s, uint64_t used, uint64_t learn)
{
    return cnt ? lsx_dp_xlogx(cnt) - s + used * learn : 0;
}

/* One cell of the optimal cut of n items into runs: the best cost of items
 * 0..b-1 in j runs, from the best costs prev[a] of items 0..a-1 in j - 1
 * runs (UINT64_MAX: impossible) and cost[a * (n + 1) + b] of the run
 * a..b-1; *arg the start a of the last run.  Ties keep the smallest a. */
static inline AURP_HD uint64_t lsx_dp_cut_cell(const uint64_t *prev, const uint64_t *cost, int n, int j, int b,
                                               int *arg)
{
    uint64_t best = UINT64_MAX;
    int ba = 0;
    for (int a = j - 1; a < b; a++) {
        if (prev[a] == UINT64_MAX) continue;
        uint64_t v = prev[a] + cost[a * (n + 1) + b];
        if (v < best) best = v, ba = a;
    }
    *arg = ba;
    return best;
}

/* Class of each of n items from the k - 1 cut points (the first item of
 * runs 1..k-1). */
static inline AURP_HD void lsx_dp_classes(const int *cut, int k, int n, int *cls)
{
    for (int x = 0, c = 0; x < n; x++) {
        while (c < k - 1 && x >= cut[c]) c++;
        cls[x] = c;
    }
}

#endif

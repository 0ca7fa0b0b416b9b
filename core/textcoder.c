/* The text coder (docs/FORMAT.md section 5.2): the range coder of section 5
 * driven by a mix of context models, for FITS headers (80-column ASCII
 * cards whose keywords, values and comments repeat) and the padding around
 * them.  Each bit's probability mixes, in the logistic domain, the
 * estimates of order 0-4 contexts, of the card column with the byte one
 * card above (a header's cards line up), and of a match model that follows
 * the last occurrence of the previous four bytes.  The model first runs
 * over a priming text of common FITS cards (textcoder_priming.h), so that a
 * single 2880-byte header is not learnt from nothing.  Integer arithmetic
 * throughout: every decoder computes the same probabilities. */
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#include "internal.h"
#include "lsmix_arith.h" /* lsx_floor_shr */
#include "rangecoder.h"
#include "textcoder_priming.h"

#define TC_ROW_BITS 10            /* rows of each hashed model */
#define TC_HASH_BITS 12           /* match positions */
#define TC_MODELS 6               /* o0, o1, o2, o3, o4, column */
#define TC_INPUTS (TC_MODELS + 1) /* and the match model */
#define TC_SETS 24                /* mixer weight sets: 3 match states x 8 bit positions */
#define TC_CARD 80                /* FITS card length */
#define TC_MATCH_MIN 4            /* bytes hashed to find a match */
#define TC_MATCH_MAX 15
#define TC_COUNT_MAX 255          /* updates a probability counts (its rate's floor) */
#define TC_WEIGHT_MAX (1 << 24)   /* |mixer weight|, 16.16 */
#define TC_ROW 16                 /* probabilities a row: the 15 nodes of a nibble (0 unused) */

/* Adaptive probabilities in rows of TC_ROW, a row per context and nibble
 * (so the four bits of a nibble read one cache line a model): v = P(bit =
 * 1) in 1/65536, n = updates so far, up to TC_COUNT_MAX. */
typedef struct {
    uint16_t *v;
    uint8_t *n;
    uint32_t rows;
} prob_table;

typedef struct {
    prob_table t[TC_MODELS];
    prob_table match_p;                /* one row: [length * 2 + predicted bit] (32 entries) */
    uint32_t cx[TC_MODELS];            /* this byte's contexts */
    uint32_t row[TC_MODELS];           /* this nibble's rows */
    uint32_t last[1u << TC_HASH_BITS]; /* string position after the last occurrence of a 4-byte hash */
    uint32_t match;                    /* position of the predicted byte, when len > 0 */
    uint32_t len;                      /* its match length, 0: no prediction */
    int32_t w[TC_SETS][TC_INPUTS];     /* mixer weights, 16.16 */
    int st[TC_INPUTS];                 /* this bit's stretched inputs (0: match model silent) */
    uint32_t at[TC_INPUTS];            /* where each input's probability is (match: ~0u if silent) */
    int set, pr;                       /* weight set, mixed P(1) in 1/4096 */
} text_model;

/* ---- the logistic domain (squash and its inverse, as in lpaq1) ---------- */

static const int squash_knots[33] = {1,    2,    3,    6,    10,   16,   27,   45,   73,   120,  194,
                                     310,  488,  747,  1101, 1546, 2047, 2549, 2994, 3348, 3607, 3785,
                                     3901, 3975, 4022, 4050, 4068, 4079, 4085, 4089, 4092, 4093, 4094};

/* 4096 / (1 + e^(-d/256)) by linear interpolation between knots 128 apart */
static int squash(int d)
{
    if (d > 2047) return 4095;
    if (d < -2047) return 1;
    int w = d & 127, k = (d >> 7) + 16;
    return (squash_knots[k] * (128 - w) + squash_knots[k + 1] * w + 64) >> 7;
}

/* stretch(p) = the smallest d in -2047..2047 with squash(d) >= p, else 2047 */
static int16_t stretch_table[4096];
/* an update moves 1/(n + 1.5) of the way to the bit: 65536 / (n + 1.5), truncated */
static int32_t rate_table[TC_COUNT_MAX + 1];

/* ---- adaptive probabilities ------------------------------------------- */

static inline int prob_stretch(const prob_table *t, uint32_t i) { return stretch_table[t->v[i] >> 4]; }

static inline void prob_update(prob_table *t, uint32_t i, int bit)
{
    int32_t p = t->v[i], n = t->n[i];
    p += (int32_t)((int64_t)((bit ? 65535 : 0) - p) * rate_table[n] / 65536);
    t->v[i] = (uint16_t)p;
    if (n < TC_COUNT_MAX) t->n[i] = (uint8_t)(n + 1);
}

/* rows of model k: o0 is direct (the high nibble's row, then the low
 * nibble's after each high nibble), the rest hashed */
static uint32_t model_rows(int k) { return k == 0 ? 17u : 1u << TC_ROW_BITS; }

/* The model and its tables in one allocation (about 250 KB: freed and taken
 * again, it stays in the heap instead of new pages each time). */
static size_t model_entries(void)
{
    size_t entries = 2 * TC_ROW; /* the match's row pair */
    for (int k = 0; k < TC_MODELS; k++) entries += (size_t)model_rows(k) * TC_ROW;
    return entries;
}

static size_t model_size(void) { return sizeof(text_model) + model_entries() * (sizeof(uint16_t) + 1); }

/* Points the tables into the block after the struct. */
static void model_point(text_model *m)
{
    uint16_t *v = (uint16_t *)(m + 1);
    uint8_t *n = (uint8_t *)(v + model_entries());
    for (int k = 0; k <= TC_MODELS; k++) {
        prob_table *t = k < TC_MODELS ? &m->t[k] : &m->match_p;
        t->rows = k < TC_MODELS ? model_rows(k) : 2;
        t->v = v, t->n = n;
        v += (size_t)t->rows * TC_ROW, n += (size_t)t->rows * TC_ROW;
    }
}

static void model_free(text_model *m) { free(m); }

/* ---- the string the model runs over: the priming text, then the data ---- */

typedef struct {
    const uint8_t *data;
    uint32_t np; /* priming bytes before data[0] */
} text_view;

static inline uint32_t byte_at(const text_view *v, uint32_t i)
{
    return i < v->np ? (uint8_t)tc_priming[i] : v->data[i - v->np];
}

/* Before byte i of the string: the byte's contexts, and the match. */
static void begin_byte(text_model *m, const text_view *v, uint32_t i)
{
    uint32_t c1 = i > 0 ? byte_at(v, i - 1) : 0, c2 = i > 1 ? byte_at(v, i - 2) : 0;
    uint32_t c3 = i > 2 ? byte_at(v, i - 3) : 0, c4 = i > 3 ? byte_at(v, i - 4) : 0;
    uint32_t above = i >= TC_CARD ? byte_at(v, i - TC_CARD) : 0;
    m->cx[0] = 0;
    m->cx[1] = c1 * 0x2545F491u;
    m->cx[2] = (c1 | c2 << 8) * 0x2545F491u;
    m->cx[3] = (c1 | c2 << 8 | c3 << 16) * 0x2545F491u;
    m->cx[4] = (c1 | c2 << 8 | c3 << 16 | c4 << 24) * 0x2545F491u;
    m->cx[5] = (above | (i % TC_CARD) << 8) * 0x2545F491u;
    /* the match goes on while it predicts right */
    if (m->len > 0 && byte_at(v, m->match) == c1 && m->match + 1 < i) {
        m->len += m->len < TC_MATCH_MAX;
        m->match++;
    } else {
        m->len = 0;
    }
    if (i >= TC_MATCH_MIN) {
        uint32_t h = ((c1 | c2 << 8 | c3 << 16 | c4 << 24) * 0x9E3779B1u) >> (32 - TC_HASH_BITS);
        if (m->len == 0 && m->last[h] > 0) m->match = m->last[h], m->len = 1;
        m->last[h] = i;
    }
}

/* The rows of a nibble: nib = 0 for the high one, 1 + its value for the low. */
static void begin_nibble(text_model *m, uint32_t nib)
{
    m->row[0] = nib;
    for (int k = 1; k < TC_MODELS; k++) m->row[k] = ((m->cx[k] + nib) * 0x9E3779B1u) >> (32 - TC_ROW_BITS);
}

/* P(bit = 1) in 1/4096 (1..4095) of bit b (7 first) of byte i; node: the
 * byte's bits so far behind a leading 1 (1..255). */
static int predict(text_model *m, const text_view *v, uint32_t node, int b)
{
    uint32_t j = (uint32_t)(3 - (b & 3)); /* bits of this nibble so far */
    uint32_t in_row = (1u << j) | (node & ((1u << j) - 1));
    for (int k = 0; k < TC_MODELS; k++) {
        m->at[k] = m->row[k] * TC_ROW + in_row;
        m->st[k] = prob_stretch(&m->t[k], m->at[k]);
    }
    m->at[TC_MODELS] = ~0u;
    m->st[TC_MODELS] = 0;
    int state = 0;
    if (m->len > 0) {
        uint32_t pb = byte_at(v, m->match) | 256u;
        if ((pb >> (b + 1)) == node) { /* the predicted byte agrees so far */
            m->at[TC_MODELS] = m->len * 2 + ((pb >> b) & 1);
            m->st[TC_MODELS] = prob_stretch(&m->match_p, m->at[TC_MODELS]);
            state = m->len < 8 ? 1 : 2;
        }
    }
    m->set = state * 8 + b;
    int64_t dot = 0;
    for (int k = 0; k < TC_INPUTS; k++) dot += (int64_t)m->w[m->set][k] * m->st[k];
    m->pr = squash((int)(dot >> 16));
    return m->pr;
}

static void update(text_model *m, int bit)
{
    int32_t err = (bit << 12) - m->pr;
    for (int k = 0; k < TC_INPUTS; k++) {
        int32_t w = m->w[m->set][k] + lsx_floor_shr(m->st[k] * err + (1 << 9), 10);
        m->w[m->set][k] = w > TC_WEIGHT_MAX ? TC_WEIGHT_MAX : w < -TC_WEIGHT_MAX ? -TC_WEIGHT_MAX : w;
    }
    for (int k = 0; k < TC_MODELS; k++) prob_update(&m->t[k], m->at[k], bit);
    if (m->at[TC_MODELS] != ~0u) prob_update(&m->match_p, m->at[TC_MODELS], bit);
}

/* ---- coding ------------------------------------------------------------ */

/* The coder's hook for each bit: codes the bit (encoder) or decodes it. */
typedef int (*bit_hook)(void *coder, uint32_t p0, int bit);

/* Byte i of the string through the model (byte: its value, or -1 when the
 * hook decodes it); code NULL: the byte is known and nothing is coded. */
static uint32_t code_byte(text_model *m, const text_view *v, uint32_t i, int byte, bit_hook code, void *coder)
{
    begin_byte(m, v, i);
    uint32_t node = 1;
    for (int b = 7; b >= 0; b--) {
        if (b == 7 || b == 3) begin_nibble(m, b == 7 ? 0 : 1 + (node & 15u));
        int p1 = predict(m, v, node, b);
        int bit = byte >= 0 ? (byte >> b) & 1 : 0;
        if (code) bit = code(coder, (uint32_t)(4096 - p1) << 4, bit); /* P(0) in 1/65536 */
        update(m, bit);
        node = (node << 1) | (uint32_t)bit;
    }
    return node & 255u;
}

static int enc_hook(void *coder, uint32_t p0, int bit)
{
    rc_enc_bit(coder, p0, bit);
    return bit;
}

static int dec_hook(void *coder, uint32_t p0, int bit)
{
    (void)bit;
    return rc_dec_bit(coder, p0);
}

/* The model after the priming text, built once (it is the same for every
 * string): each coding starts from a copy. */
static text_model *primed;
static once_flag primed_once = ONCE_FLAG_INIT;

static void build_primed(void)
{
    for (int n = 0; n <= TC_COUNT_MAX; n++) rate_table[n] = 131072 / (2 * n + 3);
    int pi = 0;
    for (int d = -2047; d <= 2047; d++) {
        int s = squash(d);
        for (int j = pi; j <= s; j++) stretch_table[j] = (int16_t)d;
        pi = s + 1;
    }
    for (int j = pi; j < 4096; j++) stretch_table[j] = 2047;
    text_model *m = calloc(1, model_size());
    if (!m) return;
    model_point(m);
    for (int k = 0; k <= TC_MODELS; k++) {
        prob_table *t = k < TC_MODELS ? &m->t[k] : &m->match_p;
        for (size_t e = 0; e < (size_t)t->rows * TC_ROW; e++) t->v[e] = 32768;
    }
    for (int s = 0; s < TC_SETS; s++)
        for (int k = 0; k < TC_INPUTS; k++) m->w[s][k] = (1 << 16) / 4;
    const text_view v = {NULL, TC_PRIMING_LEN};
    for (uint32_t i = 0; i < v.np; i++) code_byte(m, &v, i, (int)byte_at(&v, i), NULL, NULL);
    primed = m;
}

static text_model *model_new(void)
{
    call_once(&primed_once, build_primed);
    if (!primed) return NULL;
    text_model *m = malloc(model_size());
    if (!m) return NULL;
    memcpy(m, primed, model_size());
    model_point(m);
    return m;
}

size_t aurp_tc_encode(const uint8_t *src, size_t n, uint8_t *out, size_t cap)
{
    const text_view v = {src, TC_PRIMING_LEN};
    if (n >= UINT32_MAX - v.np) return (size_t)-1;
    text_model *m = model_new();
    if (!m) return (size_t)-1;
    rc_enc e;
    rc_enc_init(&e, out, cap);
    for (uint32_t i = 0; i < n && !e.overflow; i++) code_byte(m, &v, v.np + i, src[i], enc_hook, &e);
    model_free(m);
    return rc_enc_finish(&e);
}

int aurp_tc_decode(const uint8_t *in, size_t in_len, uint8_t *out, size_t n)
{
    const text_view v = {out, TC_PRIMING_LEN};
    rc_dec d;
    if (n >= UINT32_MAX - v.np || rc_dec_init(&d, in, in_len) != 0) return -1;
    text_model *m = model_new();
    if (!m) return -2;
    for (uint32_t i = 0; i < n && !d.overrun; i++) out[i] = (uint8_t)code_byte(m, &v, v.np + i, -1, dec_hook, &d);
    model_free(m);
    return rc_dec_valid_end(&d) ? 0 : -1;
}

"""A decoder of lsmix image streams (docs/FORMAT.md section 3, profile 2)
written from the specification alone, by a reader who saw no source of
the codec: test_format_lsmix.py decodes the lsmix golden streams with it,
so that the specification keeps describing the bytes the codec writes.
decode_lsmix(payload) takes an image chunk's payload (method 2) and returns
(W, H, rows of pixel values); it raises Bad where a check of 3.1-3.5
fails.  opts["ref"] (rows of the expected pixels) makes the first
difference an error that names its pixel and its context."""
import math
import struct
from pathlib import Path

from spec_paper_decoder import ldl_solve, ldl_substitute  # 3.2: "the LDL^T procedure of 2.1"

FORMAT = Path(__file__).resolve().parents[2] / "docs" / "FORMAT.md"


def spec_prior():
    """The PRIOR table of 3.3, read from the specification itself."""
    text = FORMAT.read_text()
    block = text[text.index("PRIOR[16][64] =") :].split("\n")[1:17]
    return "\n".join(block)


PRIOR_TXT = spec_prior()
PRIOR = [[int(v) for v in l.split(',')] for l in PRIOR_TXT.strip().splitlines()]
assert len(PRIOR) == 16 and all(len(r) == 64 for r in PRIOR)

M64 = (1 << 64) - 1


class Bad(Exception):
    pass


def chk(cond, msg):
    if not cond:
        raise Bad(msg)


# ---------------------------------------------------------------- helpers
def round_clamp(v):
    t = v + 0.5
    if not (t > 0):
        return 0
    if t >= 65535:
        return 65535
    return int(t // 1)  # floor of a positive double


def q16(p):
    t = p * 16.0 + 0.5
    if not (t > 0):
        return 0
    if t >= 1048560:
        return 1048560
    return int(t // 1)


def tdiv(a, b):
    """C's integer division, truncating toward zero (3.2's BR)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def ln_basic(xv):
    """3.2's ln by basic operations: the exponent and the mantissa from the bits."""
    u = struct.unpack('<Q', struct.pack('<d', xv))[0]
    k = ((u >> 52) & 0x7FF) - 1023
    f = struct.unpack('<d', struct.pack('<Q', (u & 0x000FFFFFFFFFFFFF) | 0x3FF0000000000000))[0]
    if f > 1.4142135623730951:
        f = f * 0.5
        k += 1
    s = (f - 1.0) / (f + 1.0)
    s2 = s * s
    t = s2 * (1.0 / 3 + s2 * (1.0 / 5 + s2 * (1.0 / 7 + s2 * (1.0 / 9 + s2 * (1.0 / 11 + s2 * (1.0 / 13))))))
    return float(k) * 0.69314718055994531 + (2.0 * s + 2.0 * s * t)


def exp_basic(a):
    """3.2's e^a, |a| <= 2, by basic operations."""
    xv = a * 0.0625
    e = 1.0 + xv * (1.0 + xv * (1.0 / 2 + xv * (1.0 / 6 + xv * (1.0 / 24 + xv * (1.0 / 120 + xv * (
        1.0 / 720 + xv * (1.0 / 5040 + xv * (1.0 / 40320 + xv * (1.0 / 362880)))))))))
    e = e * e
    e = e * e
    e = e * e
    return e * e


def token_of(v):
    if v < 16:
        return v, 0, 0
    b = v.bit_length() - 1
    return 16 + 4 * (b - 4) + ((v >> (b - 2)) & 3), b - 2, v & ((1 << (b - 2)) - 1)


def median3(a, b, c):
    return sorted((a, b, c))[1]


# ---------------------------------------------------------------- rANS reader
class Rans:
    def __init__(self, buf, pos):
        self.buf = buf
        self.pos = pos

    def start(self):
        chk(self.pos + 4 <= len(self.buf), "segment shorter than 4 bytes")
        self.x = struct.unpack_from('<I', self.buf, self.pos)[0]
        self.pos += 4

    def renorm(self):
        x = self.x
        while x < (1 << 23):
            chk(self.pos < len(self.buf), "read past end")
            x = ((x << 8) | self.buf[self.pos]) & 0xFFFFFFFF
            self.pos += 1
        self.x = x

    def dec_uniform(self, P):
        x = self.x
        slot = x & ((1 << P) - 1)
        self.x = x >> P
        self.renorm()
        return slot

    def dec_binary(self, f0):
        # 3.3: a binary symbol of P = 12, frequency f0 for 0
        x = self.x
        slot = x & 4095
        if slot < f0:
            self.x = f0 * (x >> 12) + slot
            b = 0
        else:
            self.x = (4096 - f0) * (x >> 12) + slot - f0
            b = 1
        self.renorm()
        return b

    def dec_token(self, f, cum):
        x = self.x
        slot = x & 0x7FFF
        # find s with cum[s] <= slot < cum[s]+f[s]
        lo, hi = 0, 63
        while lo < hi:
            mid = (lo + hi + 1) >> 1
            if cum[mid] <= slot:
                lo = mid
            else:
                hi = mid - 1
        s = lo
        while f[s] == 0 or not (cum[s] <= slot < cum[s] + f[s]):
            s -= 1
        self.x = f[s] * (x >> 15) + slot - cum[s]
        self.renorm()
        return s


def zz_varint(buf, pos):
    z = 0
    for i in range(3):
        chk(pos < len(buf), "cascade block cut short")
        c = buf[pos]
        pos += 1
        z |= (c & 127) << (7 * i)
        if not (c & 128):
            chk(z <= 65535, "varint > 65535")
            w = (z >> 1) ^ -(z & 1)
            return w, pos
    raise Bad("varint longer than 3 bytes")


# ---------------------------------------------------------------- decoder
def decode_lsmix(buf, opts=None):
    opts = opts or {}
    chk(len(buf) >= 24, "short header")
    chk(buf[0] == 2, "profile")
    K, M, C = buf[1], buf[2], buf[3]
    W, H = struct.unpack_from('<II', buf, 4)
    fsh, rsh, S, P = buf[12], buf[13], buf[14], buf[15]
    ioff = struct.unpack_from('<H', buf, 16)[0]
    I = buf[18]
    ibs = list(buf[19:22])
    pset = buf[22]
    flags = buf[23]
    chk(1 <= K <= 16 and 1 <= M <= 17 and M % 2 == 1 and 1 <= C <= 16, "K/M/C")
    chk(1 <= fsh <= 8 and 8 <= rsh <= 40 and 8 <= S <= 24 and P == 15, "f/r/S/P")
    chk(1 <= I <= 4 and C * I <= 64, "I")
    ib = ibs[:I - 1]
    chk(all(v == 0 for v in ibs[I - 1:]), "unused ib bytes")
    chk(all(ib[i] < ib[i + 1] for i in range(len(ib) - 1)) and all(v < 64 for v in ib), "ib order")
    chk(flags & ~127 == 0, "flags")
    chk(not (flags & 16) or (flags & 4), "bit4 w/o bit2")
    chk(not (flags & 32) or (flags & 8), "bit5 w/o bit3")
    F_PRIOR, F_BG, F_CASC, F_NOLEN, F_WIDE, F_CARRY, F_SIGN = [bool(flags & (1 << i)) for i in range(7)]
    chk(pset <= 3 and (pset < 2 or F_BG), "predictor set")
    weighted = pset == 3 and fsh == 1
    chk(W >= 1 and H >= 1 and W * H < 2 ** 32, "W/H")
    R = (M - 1) // 2
    pos = 24
    thr = []
    for q in range(C - 1):
        chk(pos + 4 <= len(buf), "thr")
        thr.append(struct.unpack_from('<I', buf, pos)[0])
        pos += 4
    chk(all(thr[i] < thr[i + 1] for i in range(len(thr) - 1)), "thr order")
    clip = 0
    wts = []
    NL = 0
    if F_CASC:
        chk(pos + 2 <= len(buf), "clip")
        clip = struct.unpack_from('<H', buf, pos)[0]
        pos += 2
        chk(clip <= 32767, "clip")
        NL = 218 if F_WIDE else 134
        for _ in range(NL):
            w, pos = zz_varint(buf, pos)
            wts.append(w)
        chk(sum(abs(w) for w in wts) * (clip + 1) < 2 ** 31, "weight bound")
    npix = W * H
    seglen = 1 << S
    nseg = (npix + seglen - 1) >> S
    seg_lengths = None
    if not F_NOLEN:
        seg_lengths = []
        for s in range(nseg):
            chk(pos + 4 <= len(buf), "seg lengths")
            seg_lengths.append(struct.unpack_from('<I', buf, pos)[0])
            pos += 4
        chk(all(l >= 4 for l in seg_lengths), "seg len >= 4")
        chk(pos + sum(seg_lengths) == len(buf), "seg lengths sum")
    chk(pos + 4 * nseg <= len(buf), "segments cannot each have 4 bytes")

    # cascade support
    lags = []
    if F_CASC:
        hs = [16, 12, 8, 4, 2, 0] if F_WIDE else [2, 0]
        for r_, h_ in enumerate(hs, 1):
            for dn in range(-h_, h_ + 1):
                lags.append((r_, dn))
        assert 128 + len(lags) == NL

    D = K + 6
    Z = D + 1
    nmem = {0: 3, 1: 5, 2: 6, 3: 6}[pset] + (1 if F_BG else 0)
    # member indices
    if pset == 0:
        names = ['LS', 'CM', 'AF']
    elif pset == 1:
        names = ['LS', 'CM', 'AF', 'RV', 'AL']
    elif pset == 2:
        names = ['LS', 'CM', 'RV', 'AL', 'RL1', 'RL2']
    else:
        names = ['LS', 'LG', 'RV', 'RC', 'RL1', 'RL2']
    if F_BG:
        names.append('BR' if pset == 3 else 'BG')
    assert len(names) == nmem

    ncx = C * I
    counts = [list(PRIOR[c // I]) if F_PRIOR else [0] * 64 for c in range(ncx)]
    freqs = [None] * ncx
    cums = [None] * ncx

    # 3.3's binary contexts (byte 23 bit 6): counts [n0, n1] and f0
    sgn_n = [[0, 0] for _ in range(48)]
    raw_n = [[0, 0] for _ in range(64)]
    sgn_f0 = [2048] * 48
    raw_f0 = [2048] * 64

    def bin_f0(nn):
        if nn[0] + nn[1] > 1023:
            nn[0] = (nn[0] + 1) >> 1
            nn[1] = (nn[1] + 1) >> 1
        f1 = ((2 * nn[1] + 1) * 4096) // (2 * (nn[0] + nn[1]) + 2)
        return 4096 - max(32, min(4064, f1))

    def refresh():
        if F_SIGN:
            for c in range(48):
                sgn_f0[c] = bin_f0(sgn_n[c])
            for c in range(64):
                raw_f0[c] = bin_f0(raw_n[c])
        for c in range(ncx):
            cnt = counts[c]
            if sum(cnt) > 65536:
                for t in range(64):
                    cnt[t] = (cnt[t] + 1) >> 1
            T = sum(cnt)
            if T == 0:
                f = [512] * 64
            else:
                f = [1 + (cnt[t] * (32768 - 64)) // T for t in range(64)]
                mx = max(cnt)
                tm = cnt.index(mx)
                f[tm] += 32768 - sum(f)
            cu = [0] * 64
            acc = 0
            for t in range(64):
                cu[t] = acc
                acc += f[t]
            freqs[c] = f
            cums[c] = cu

    x = [[0] * W for _ in range(H)]
    eres = [[0] * W for _ in range(H)]  # final residuals
    Ecas = [0] * npix  # clipped e1, raster order

    Acm = [0] * W
    Bcm = [0] * W
    G = [[0] * (Z * Z) for _ in range(W)]  # full Z*Z storage, upper triangle used
    coef = [None] * W
    errPrev = [[0] * W for _ in range(nmem)]
    errCur = [[0] * W for _ in range(nmem)]
    ccol = [[0] * W for _ in range(nmem)]  # set 0 column error levels
    # BG
    Cbg = [0] * W
    Sbg = [0] * W
    # BR (set 3)
    Lbr = [0] * W
    Sbr = [0] * W
    litbr = [0] * W

    rans = Rans(buf, pos)
    seg = -1
    carry_open = False
    carry_c = 0
    carry_bits = 0
    seg_start_pos = pos

    def carried(Pb):
        # Pb bits from the open carry where they fit (None: not carried; the carry closes)
        nonlocal carry_open, carry_c, carry_bits
        if not carry_open:
            return None
        if Pb <= carry_bits:
            v = carry_c & ((1 << Pb) - 1)
            carry_c >>= Pb
            carry_bits -= Pb
            return v
        chk(carry_c == 0, "carry bits not taken are not 0")
        carry_open = False
        return None

    def take_uniform(Pb):
        v = carried(Pb)
        return rans.dec_uniform(Pb) if v is None else v

    def end_segment(s):
        nonlocal carry_c, carry_open
        last = (s == nseg - 1)
        if carry_open:
            chk(carry_c == 0, "carry bits not 0 at seg end")
            carry_open = False
        if F_CARRY and not last:
            chk(rans.x >= (1 << 23) and rans.x - (1 << 23) < (1 << 30), "seg end state (carry)")
        else:
            chk(rans.x == (1 << 23), "seg end state %d x=%d" % (s, rans.x))
        if seg_lengths is not None:
            chk(rans.pos - seg_start_pos == seg_lengths[s], "segment length")
        if last:
            chk(rans.pos == len(buf), "stream end")

    wcur = [0] * W
    prevA = prevB = None  # the column means before the row above (set after row 0)
    p = 0
    for m in range(H):
        xm = x[m]
        # ---------------- before row m: training and solve
        if m >= 1:
            xp = x[m - 1]
            # regressors of row m-1 with means before row m-1 (stored in prevA/prevB)
            outer = []
            lo_w = (min(x[m - 2]) if m >= 2 else 0) if weighted else 0
            for q in range(W):
                zq = [xp[q - 1 - j] if q - 1 - j >= 0 else 0 for j in range(K)]
                zq.append(x[m - 2][q - 1] if (m - 2 >= 0 and q >= 1) else 0)
                zq.append(x[m - 2][q] if m - 2 >= 0 else 0)
                zq.append(x[m - 2][q + 1] if (m - 2 >= 0 and q + 1 < W) else 0)
                zq.append(prevA[q])
                zq.append(prevB[q])
                zq.append(16)
                zq.append(xp[q])
                wq = max(1, (128 << 8) // (128 + max(0, xp[q] - lo_w))) if weighted else 1
                o = [0] * (Z * Z)
                for a_ in range(Z):
                    za = zq[a_] * wq
                    base = a_ * Z
                    for b_ in range(a_, Z):
                        o[base + b_] = za * zq[b_]
                outer.append(o)
            half = 1 << (fsh - 1)
            for n in range(W):
                lo = max(0, n - R)
                hi = min(W - 1, n + R)
                Sn = [0] * (Z * Z)
                for q in range(lo, hi + 1):
                    oq = outer[q]
                    for idx in range(Z * Z):
                        Sn[idx] += oq[idx]
                g = G[n]
                for a_ in range(Z):
                    base = a_ * Z
                    for b_ in range(a_, Z):
                        v = g[base + b_]
                        g[base + b_] = v - ((v + half) >> fsh) + Sn[base + b_]
                # solve
                Ad = [[0.0] * D for _ in range(D)]
                for a_ in range(D):
                    for b_ in range(a_, D):
                        v = g[a_ * Z + b_]
                        if a_ == b_:
                            v = v + (v >> rsh)
                        Ad[a_][b_] = Ad[b_][a_] = float(v)
                hv = [float(g[a_ * Z + D]) for a_ in range(D)]
                coef[n] = ldl_solve(Ad, hv, D)
            # BG weights for this row
            if F_BG:
                for n in range(W):
                    s_ = Sbg[n]
                    wcur[n] = (1 << 48) // (s_ * s_ + 16384)
        # row state
        afs = [0] * 5
        als = [0] * 5
        rvs = [0] * 9
        bg_o = 0
        bg_ow = 1
        bg_os = 0
        lgq = [0.0] * 5
        lg_ref = 0.0
        br_o = 0
        br_k = 0
        rlA = [[[0.0] * 5 for _ in range(5)], [[0.0] * 3 for _ in range(3)]]
        rlb = [[0.0] * 5, [0.0] * 3]
        rlD = [5, 3]
        rlSup = [[(1, -1), (1, 0), (1, 1), (2, 0), (0, -1)], [(0, -1), (0, -2), (1, 0)]]
        for n in range(W):
            # ---------- refresh
            if p == 0 or p % 1024 == 0 or (p < 1024 and p % 128 == 0):
                refresh()
            # ---------- segment start
            if p % seglen == 0:
                s = p >> S
                if s > 0:
                    end_segment(s - 1)
                seg = s
                if s > 0 and F_CARRY:
                    carry_c = rans.x - (1 << 23)
                    chk(0 <= carry_c < (1 << 30), "carry >= 2^30")
                    carry_open = True
                    carry_bits = 30
                seg_start_pos = rans.pos
                rans.start()
            pis = p - (seg << S)
            if carry_open and pis >= 32:
                chk(carry_c == 0, "carry not 0 at pixel 33")
                carry_open = False
            # ---------- predictions
            Emin = 0
            r_, mb_, acc = 0, 0, 0
            if m == 0:
                P1 = 0 if n == 0 else xm[n - 1]
                preds = [float(P1)] * nmem
            else:
                xp = x[m - 1]
                zc_ = [xm[n - 1 - j] if n - 1 - j >= 0 else 0 for j in range(K)]
                zc_.append(xp[n - 1] if n >= 1 else 0)
                zc_.append(xp[n])
                zc_.append(xp[n + 1] if n + 1 < W else 0)
                zc_.append(Acm[n])
                zc_.append(Bcm[n])
                zc_.append(16)
                a = coef[n]
                pls = 0.0
                for j in range(len(a)):
                    pls = pls + a[j] * float(zc_[j])
                preds = [pls, float(Acm[n]) * 0.0625]
                z1 = q16(pls)
                z2 = 16 * xp[n]
                z3 = 16 * x[m - 2][n] if m >= 2 else z2

                def affine(sv, zc):
                    if n == 0 or sv[0] == 0:
                        return zc * 0.0625
                    w = float(sv[0])
                    my = float(sv[1]) / w
                    mz = float(sv[2]) / w
                    vzz = float(sv[3]) / w - mz * mz
                    vzy = float(sv[4]) / w - mz * my
                    slope = (vzy + 16384.0) / (vzz + 16384.0)
                    return (my + slope * (zc - mz)) * 0.0625

                def rv():
                    if n == 0 or rvs[0] == 0:
                        return float(z2 + z3) * 0.03125
                    Lr = 16384.0
                    r = [float(v) for v in rvs]
                    w = r[0]
                    my = r[1] / w
                    m0 = r[2] / w
                    m1 = r[3] / w
                    c0 = r[4] / w - m0 * my + Lr * 0.5
                    c1 = r[5] / w - m1 * my + Lr * 0.5
                    a00 = r[6] / w - m0 * m0 + Lr
                    a01 = r[7] / w - m0 * m1
                    a11 = r[8] / w - m1 * m1 + Lr
                    f_ = a01 / a00
                    d11 = a11 - f_ * a01
                    e1_ = c1 - f_ * c0
                    b1 = e1_ / d11
                    b0 = (c0 - a01 * b1) / a00
                    return (my + b0 * (float(z2) - m0) + b1 * (float(z3) - m1)) * 0.0625

                if pset == 0:
                    preds.append(affine(afs, float(Bcm[n])))
                elif pset == 1:
                    preds.append(affine(afs, float(Bcm[n])))
                    preds.append(rv())
                    preds.append(affine(als, float(z1)))
                else:
                    if pset == 3:  # LG in CM's place
                        def lpx(j):
                            j = min(max(j, 0), W - 1)
                            return float(xp[j]) - float(Cbg[j]) * 0.0625
                        lg_ref = (lpx(n - 1) + 2.0 * lpx(n) + lpx(n + 1)) * 0.25
                        if n < 2:
                            preds[1] = float(xp[n])
                        else:
                            qg = lgq
                            a_lg = 0.0
                            w2 = qg[2] + 0.01 * qg[0]
                            det = qg[0] * w2 - qg[1] * qg[1]
                            if qg[0] > 100.0 and det > 0:
                                a_lg = (qg[3] * w2 - qg[1] * qg[4]) / det
                            a_lg = min(max(a_lg, -2.0), 2.0)
                            preds[1] = float(Cbg[n]) * 0.0625 + lg_ref * exp_basic(a_lg)
                    preds.append(rv())
                    if pset == 3:
                        preds.append(float(Lbr[n]) * (1.0 / 256.0))  # RC
                    else:
                        preds.append(affine(als, float(z1)))
                    # RL members
                    rlz = []
                    for qm in range(2):
                        zs = []
                        for (dm, dn) in rlSup[qm]:
                            j = min(max(n + dn, 0), W - 1)
                            mm = m - dm
                            if mm < 0:
                                mm = m - 1
                            if dm == 0 and n == 0:
                                mm = m - 1
                                j = 0
                            zs.append(float(x[mm][j]) - float(Cbg[j]) * 0.0625)
                        rlz.append(zs)
                        Dq = rlD[qm]
                        if n < 2:
                            preds.append(float(xp[n]))
                            continue
                        cn = float(Cbg[n]) * 0.0625
                        sg = float(Sbg[n]) * (1.0 / 172.5)
                        ar = 30.0 * sg * sg
                        ok = 1
                        Am = rlA[qm]
                        Lm = [[0.0] * Dq for _ in range(Dq)]
                        dd = [0.0] * Dq
                        inv = [0.0] * Dq
                        for i in range(Dq):
                            for j in range(i):
                                t = Am[i][j]
                                for k in range(j):
                                    t = t - Lm[i][k] * Lm[j][k] * dd[k]
                                Lm[i][j] = t * inv[j]
                            dg = Am[i][i]
                            dg = dg + dg * 0.002 + ar
                            for k in range(i):
                                dg = dg - Lm[i][k] * Lm[i][k] * dd[k]
                            if not (dg > 0):
                                ok = 0
                                dg = 1.0
                            dd[i] = dg
                            inv[i] = 1.0 / dg
                        av = ldl_substitute(Lm, inv, rlb[qm], Dq)
                        pr = cn
                        if ok:
                            for k in range(Dq):
                                pr = pr + av[k] * zs[k]
                        preds.append(pr)
                if pset == 3:
                    preds.append(float(Lbr[n] + br_o) * (1.0 / 256.0))  # BR
                elif F_BG:
                    preds.append(float(Cbg[n] + bg_o) * 0.0625)
                # ---------- error levels and blend
                Es = []
                Ectx = []
                for k in range(nmem):
                    ec = errCur[k]
                    ep = errPrev[k]
                    if pset == 0:
                        nb = (ec[n - 1] if n >= 1 else 0) + ep[n] + (ep[n - 1] if n >= 1 else 0) + (ep[n + 1] if n + 1 < W else 0)
                        if F_BG:
                            Es.append(32 * ccol[k][n] + nb)
                            Ectx.append(2 * ccol[k][n] + nb)
                        else:
                            Es.append(2 * ccol[k][n] + nb)
                            Ectx.append(Es[-1])
                    else:
                        e_ = (ec[n - 1] if n >= 1 else 0) + (ec[n - 2] if n >= 2 else 0) + ep[n] + (ep[n - 1] if n >= 1 else 0) + (ep[n + 1] if n + 1 < W else 0)
                        Es.append(e_)
                        Ectx.append(e_)
                num = 0.0
                den = 0.0
                for k in range(nmem):
                    if F_BG:
                        t = float(Es[k]) * 0.0078125 + 1.0
                        u = t * t * t
                        if pset == 0:
                            w = 1.0 / (u * t * t * t)
                        else:
                            w = 1.0 / u
                    else:
                        t = float(Es[k]) * 0.0625 + 1.0
                        w = 1.0 / (t * t * t)
                    num = num + w * preds[k]
                    den = den + w
                bl = num / den
                P1 = round_clamp(bl)
                Emin = min(Ectx)
                # 3.3: the blend's part of the sign context
                y_ = (bl - float(P1)) * 1024.0
                r_ = -512 if not (y_ > -512.0) else 511 if y_ >= 511.0 else math.floor(y_)
                mb_ = (1 if preds[0] > bl else 0) + (2 if preds[nmem - 1] > bl else 0)
            # ---------- cascade
            pred = P1
            if F_CASC and m >= 1:
                acc = 0
                for j in range(128):
                    t_ = p - 1 - j
                    if t_ < 0:
                        break
                    acc += wts[j] * Ecas[t_]
                for k, (dm, dn) in enumerate(lags):
                    mm = m - dm
                    q = n - dn
                    if mm >= 0 and 0 <= q < W:
                        acc += wts[128 + k] * Ecas[mm * W + q]
                cc = (acc + 512) >> 10
                pred = max(0, min(65535, P1 + cc))
            # ---------- context
            def ea(i, q):
                if 0 <= i and 0 <= q < W:
                    return abs(eres[i][q])
                return 0
            act = 2 * ea(m, n - 1) + 2 * ea(m - 1, n) + ea(m - 1, n - 1) + ea(m - 1, n + 1) + ea(m, n - 2) + ea(m - 2, n)
            a16 = min(8 * act + Emin, 2 ** 32 - 1)
            acl = 0
            for tv in thr:
                if tv <= a16:
                    acl += 1
            btok = token_of(max(0, pred - ioff))[0]
            bcl = 0
            for bv in ib:
                if bv <= btok:
                    bcl += 1
            ctx = acl * I + bcl
            # ---------- symbols
            tok = rans.dec_token(freqs[ctx], cums[ctx])
            D_ = r_ + acc - 1024 * (pred - P1)
            sctx = 3 * (4 * mb_ + (D_ >= -256) + (D_ >= 0) + (D_ >= 256)) + (tok >= 4) + (tok >= 16)
            nraw = 0
            if tok < 16:
                v = tok
            else:
                bb = (tok - 16) // 4 + 4
                nraw = bb - 2
                raw = carried(nraw) if F_SIGN else take_uniform(nraw)
                if raw is None:  # the top raw bit adaptive, then the others uniform
                    top = rans.dec_binary(raw_f0[tok])
                    raw = (top << (nraw - 1)) + (rans.dec_uniform(nraw - 1) if nraw > 1 else 0)
                v = ((4 + ((tok - 16) & 3)) << (bb - 2)) + raw
                chk(v <= 65535, "token value > 65535")
            if v > 0:
                sg_ = carried(1) if F_SIGN else take_uniform(1)
                if sg_ is None:
                    sg_ = rans.dec_binary(sgn_f0[sctx])
                e = -v if sg_ else v
            else:
                e = 0
            counts[ctx][tok] += 1
            if F_SIGN:
                if v > 0:
                    sgn_n[sctx][1 if e < 0 else 0] += 1
                if nraw > 0:
                    raw_n[tok][(v >> (nraw - 1)) & 1] += 1
            xv = pred + e
            chk(0 <= xv <= 65535, "reconstructed value out of range at %d,%d" % (m, n))
            xm[n] = xv
            eres[m][n] = e
            ref = opts.get('ref')
            if ref is not None and ref[m][n] != xv:
                raise Bad("MISMATCH at (row,col)=(%d,%d) orig=%d got=%d pred=%d P1=%d e=%d tok=%d ctx=%d seg=%d" % (m, n, ref[m][n], xv, pred, P1, e, tok, ctx, seg))
            e1 = xv - P1
            Ecas[p] = max(-clip, min(clip, e1))
            # ---------- member errors
            y16 = 16 * xv
            for k in range(nmem):
                errCur[k][n] = abs(y16 - q16(preds[k]))
            if m >= 1:
                # AF sums
                if pset in (0, 1):
                    zz = Bcm[n]
                    terms = (1, y16, zz, zz * zz, zz * y16)
                    for k in range(5):
                        afs[k] = afs[k] - ((afs[k] + 2) >> 2) + (terms[k] << 16)
                if pset in (1, 2):
                    terms = (1, y16, z1, z1 * z1, z1 * y16)
                    for k in range(5):
                        als[k] = als[k] - ((als[k] + 2) >> 2) + (terms[k] << 16)
                if pset >= 1:
                    terms = (1, y16, z2, z3, z2 * y16, z3 * y16, z2 * z2, z2 * z3, z3 * z3)
                    for k in range(9):
                        rvs[k] = rvs[k] - ((rvs[k] + 4) >> 3) + (terms[k] << 14)
                if pset == 3:
                    if n >= 1:  # LG's sums
                        yg = float(xv) - float(Cbg[n]) * 0.0625
                        for k in range(5):
                            lgq[k] = lgq[k] * 0.9
                        lo_g = 0.5 * (float(Sbg[n]) * (1.0 / 172.5)) + 1.0
                        if yg > lo_g and lg_ref > lo_g:
                            r_g = ln_basic(yg / lg_ref)
                            w_g = 1.0 / (1.0 / yg + 0.375 / lg_ref)
                            lgq[0] = lgq[0] + w_g
                            lgq[3] = lgq[3] + w_g * r_g
                        lgq[2] = lgq[2] - 2.0 * lgq[1] + lgq[0]
                        lgq[1] = lgq[1] - lgq[0]
                        lgq[4] = lgq[4] - lgq[3]
                    e_br = 256 * xv - Lbr[n] - br_o  # BR's row offset
                    if abs(e_br) < 4 * Sbr[n]:
                        br_o += tdiv(e_br, min(br_k + 2, 16))
                        br_k += 1
                        br_o = min(max(br_o, -3 * Sbr[n]), 3 * Sbr[n])
                if pset >= 2 and n >= 1:
                    yv = float(xv) - float(Cbg[n]) * 0.0625
                    for qm in range(2):
                        zs = rlz[qm]
                        Am = rlA[qm]
                        bq = rlb[qm]
                        for i in range(rlD[qm]):
                            for j in range(i + 1):
                                Am[i][j] = Am[i][j] * 0.5 + zs[i] * zs[j]
                            bq[i] = bq[i] * 0.5 + zs[i] * yv
                if F_BG and pset != 3:
                    Sn_ = Sbg[n]
                    lim = (Sn_ * 59) >> 8
                    rc = min(max(y16 - Cbg[n], bg_o - lim), bg_o + lim)
                    bg_ow = bg_ow - ((bg_ow + 16) >> 5) + wcur[n]
                    bg_os = bg_os - ((bg_os + 16) >> 5) + wcur[n] * rc
                    qq = abs(bg_os) // bg_ow
                    bg_o = qq if bg_os >= 0 else -qq
            p += 1
        # ---------- after row m
        prevA = list(Acm)
        prevB = list(Bcm)
        for n in range(W):
            v = 16 * xm[n]
            if m == 0:
                Acm[n] = v
                Bcm[n] = v
            else:
                Acm[n] = Acm[n] + ((v - Acm[n] + 8) >> 4)
                Bcm[n] = Bcm[n] + ((v - Bcm[n] + 2) >> 2)
        if pset == 0:
            for k in range(nmem):
                ec = errCur[k]
                cc_ = ccol[k]
                for n in range(W):
                    if F_BG:
                        l_ = ec[n - 1] if n >= 1 else ec[n]
                        r_ = ec[n + 1] if n + 1 < W else ec[n]
                        v = median3(l_, ec[n], r_)
                        if m == 0:
                            cc_[n] = v
                        else:
                            cc_[n] = cc_[n] + ((v - cc_[n] + 8) >> 4)
                    else:
                        if m == 0:
                            cc_[n] = ec[n]
                        else:
                            cc_[n] = cc_[n] + ((ec[n] - cc_[n] + 4) >> 3)
        if F_BG:
            for n in range(W):
                if m == 0:
                    Cbg[n] = 16 * xm[n]
                    Sbg[n] = 1024
                else:
                    r = 16 * xm[n] - Cbg[n]
                    lim = (Sbg[n] * 59) >> 8
                    rc = min(max(r, -lim), lim)
                    sh = ((m + 1).bit_length() - 1) if m + 1 < 32 else 5
                    if r > lim or r < -lim:
                        sh += 3
                    Cbg[n] = Cbg[n] + ((rc + (1 << (sh - 1))) >> sh)
                    if 16 * abs(r) > Sbg[n]:
                        Sbg[n] = Sbg[n] + (Sbg[n] >> 4)
                    else:
                        Sbg[n] = Sbg[n] - (Sbg[n] >> 4)
                    Sbg[n] = max(Sbg[n], 128)
        if pset == 3:  # BR's columns
            for n in range(W):
                if m == 0:
                    Lbr[n], Sbr[n], litbr[n] = 256 * xm[n], 2048, 0
                    continue
                d = 256 * xm[n] - Lbr[n]
                if abs(d) < 4 * Sbr[n]:
                    Sbr[n] += tdiv(abs(d) * 5 // 4 - Sbr[n], 32)
                    Lbr[n] += tdiv(d, 32)
                    litbr[n] = 0
                elif d < 0:
                    Lbr[n] += tdiv(d, 2)
                    litbr[n] = 0
                else:
                    if litbr[n] <= 48:
                        litbr[n] += 1
                    if litbr[n] > 48:
                        Lbr[n] += tdiv(d, 32)
        errPrev, errCur = errCur, [[0] * W for _ in range(nmem)]
    end_segment(nseg - 1)
    return W, H, x

"""A decoder of .aurp files written from docs/FORMAT.md alone (sections 1,
2 and 5.1: the container, the general coder and the paper profile), not
from core/: test_format_paper.py decodes the paper profile's golden streams
with it, so that the specification keeps describing the bytes the codec
writes.  Text chunks (5.2) have their own such decoder
(test_format_text.py); lsmix image streams (section 3) are refused."""
import ctypes
import math
import struct

MASK32 = 0xFFFFFFFF


class FormatError(Exception):
    """The stream breaks a rule of FORMAT.md."""


def _xxh3_64():
    """XXH3-64 (seed 0) from the system's libxxhash (FORMAT.md, top)."""
    lib = ctypes.CDLL("libxxhash.so.0")
    lib.XXH3_64bits.restype = ctypes.c_uint64
    lib.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return lambda b: lib.XXH3_64bits(bytes(b), len(b))


xxh3_64 = _xxh3_64()

# ---------------------------------------------------------------- range decoder (5.1)
class RangeDecoder:
    def __init__(self, B):
        B = bytes(B)
        if len(B) < 5:
            raise FormatError('range coding shorter than 5 bytes')
        if B[0] != 0:
            raise FormatError('range coding first byte not 0')
        self.B = B
        self.range = 0xFFFFFFFF
        self.code = int.from_bytes(B[1:5], 'big')
        self.pos = 5
        self.overrun = False

    def bit(self, p0):
        bound = (self.range >> 16) * p0
        if self.code < bound:
            b = 0
            self.range = bound
        else:
            b = 1
            self.code -= bound
            self.range -= bound
        while self.range < (1 << 24):
            self.range = (self.range << 8) & MASK32
            if self.pos < len(self.B):
                nb = self.B[self.pos]
            else:
                nb = 0
                self.overrun = True
            self.code = ((self.code << 8) & MASK32) | nb
            self.pos += 1
        return b

    def finish(self):
        if self.overrun or self.pos != len(self.B) or self.code != 0:
            raise FormatError('range coding not exact: pos=%d len=%d code=%d overrun=%s'
                              % (self.pos, len(self.B), self.code, self.overrun))


# ---------------------------------------------------------------- general coder (5.1)
def general_model(n, code_bit, data=None):
    """5.1's model over n bytes: code_bit(p0, b) codes one bit whose
    probability of 0 is p0/65536 and returns it (b is the bit when encoding
    data, None when decoding).  Returns the n bytes."""
    o1 = [[32768] * 256 for _ in range(256)]
    o2 = [[32768] * 256 for _ in range(256)]
    c1 = c2 = 0
    out = bytearray()
    for i in range(n):
        h = ((((c2 << 8) | c1) * 0x9E3779B1) & MASK32) >> 24
        t1 = o1[c1]
        t2 = o2[h]
        node = 1
        for k in range(7, -1, -1):
            q1 = t1[node]
            q2 = t2[node]
            p0 = (q1 + q2) >> 1
            b = code_bit(p0, None if data is None else (data[i] >> k) & 1)
            if b == 0:
                t1[node] = q1 + ((65536 - q1) >> 4)
                t2[node] = q2 + ((65536 - q2) >> 4)
            else:
                t1[node] = q1 - (q1 >> 4)
                t2[node] = q2 - (q2 >> 4)
            node = 2 * node + b
        byte = node & 0xFF
        out.append(byte)
        c2, c1 = c1, byte
    return bytes(out)


def general_decode(B, n):
    rd = RangeDecoder(B)
    out = general_model(n, lambda p0, _b: rd.bit(p0))
    rd.finish()
    return out


# ---------------------------------------------------------------- paper image (2)
def freqs_from_counts(count, P, WH):
    nsym = len(count)
    f = [(c << P) // WH for c in count]
    for s in range(nsym):
        if count[s] > 0 and f[s] == 0:
            f[s] = 1
    diff = (1 << P) - sum(f)
    if diff > 0:
        mx = max(count)
        s_star = count.index(mx)
        f[s_star] += diff
    while diff < 0:
        mx = max(f)
        s_star = f.index(mx)
        if mx <= 1:
            raise FormatError('no frequencies exist')
        take = min(-diff, f[s_star] - 1)
        f[s_star] -= take
        diff += take
    return f


def read_varints(buf, nsym, WH):
    vals = []
    pos = 0
    for _ in range(nsym):
        v = 0
        sh = 0
        while True:
            if pos >= len(buf):
                raise FormatError('varint runs past table')
            if sh > 63:
                raise FormatError('a varint longer than 10 bytes')
            b = buf[pos]
            pos += 1
            v |= (b & 0x7F) << sh
            sh += 7
            if not (b & 0x80):
                break
        v &= (1 << 64) - 1  # of a 10th byte only the lowest bit counts
        if v > WH:
            raise FormatError('count > W*H')
        vals.append(v)
    if pos != len(buf):
        raise FormatError('varints do not end at the table end')
    return vals


def rans_decode_segment(B, n, f, cum, P, sym_of_slot):
    if len(B) < 4:
        raise FormatError('segment < 4 bytes')
    x = int.from_bytes(B[0:4], 'little')
    pos = 4
    out = []
    mask = (1 << P) - 1
    for _ in range(n):
        slot = x & mask
        s = sym_of_slot(slot)
        x = f[s] * (x >> P) + slot - cum[s]
        while x < (1 << 23):
            if pos >= len(B):
                raise FormatError('segment overrun')
            x = (x << 8) | B[pos]
            pos += 1
        out.append(s)
    if x != (1 << 23) or pos != len(B):
        raise FormatError('segment invalid: x=%d pos=%d len=%d' % (x, pos, len(B)))
    return out


def ldl_substitute(L, invD, b, k):
    """2.1's forward and back substitution with the factors L (strict lower
    triangle) and invD of the first k pivots: a[0..k-1]."""
    y = [0.0] * k
    for j in range(k):
        t = b[j]
        for l in range(j):
            t = t - L[j][l] * y[l]
        y[j] = t
    a = [0.0] * k
    for j in range(k - 1, -1, -1):
        t = y[j] * invD[j]
        for l in range(j + 1, k):
            t = t - L[l][j] * a[l]
        a[j] = t
    return a


def ldl_solve(A, b, k):
    """2.1's solve (A: the full symmetric k x k doubles): a[0..kk-1], kk the
    pivots that passed."""
    L = [[0.0] * k for _ in range(k)]
    U = [0.0] * k
    invD = [0.0] * k
    kk = k
    for j in range(k):
        Lj = L[j]
        Aj = A[j]
        for i in range(j):
            t = Aj[i]
            Li = L[i]
            for l in range(i):
                t = t - U[l] * Li[l]
            U[i] = t
            Lj[i] = t * invD[i]
        d = Aj[j]
        for l in range(j):
            d = d - U[l] * Lj[l]
        if not (d > Aj[j] * 2.0 ** -30):
            kk = j
            break
        invD[j] = 1.0 / d
    return ldl_substitute(L, invD, b, kk)


def ldl_predict(A, bvec, k, xs_row, n):
    """Section 2.1 solve + prediction. A, bvec are lists of floats."""
    a = ldl_solve(A, bvec, k)
    if not a:
        return xs_row[n - 1]
    v = 0.0
    for r in range(len(a)):
        v = v + a[r] * xs_row[n - 1 - r]
    t = v + 0.5
    if not (t > 0):
        return 0
    if t >= 65535:
        return 65535
    return math.floor(t)


def paper_entropy_decode(st):
    """Sections 2, 2.2-2.5: an image stream of the paper profile -> its header
    fields, counts, symbols and escape values (the checks of 2.6 but the
    reconstruction's)."""
    if len(st) < 40:
        raise FormatError('image stream header truncated')
    prof, N, M, P = st[0], st[1], st[2], st[3]
    if prof != 1:
        raise FormatError('profile %d: not the paper profile (this decoder has section 2 only)' % prof)
    W, H, T = struct.unpack_from('<III', st, 4)
    Tm, Tp = struct.unpack_from('<ii', st, 16)
    S = st[24]
    if st[25:28] != b'\0\0\0':
        raise FormatError('reserved')
    Lt, = struct.unpack_from('<I', st, 28)
    E, = struct.unpack_from('<Q', st, 32)
    if not (1 <= N <= 32 and 1 <= M <= 16 and 12 <= P <= 20 and 8 <= S <= 24):
        raise FormatError('param range')
    if W == 0 or H == 0 or W * H >= 1 << 32 or T > 2**31 - 1:
        raise FormatError('W/H/T')
    if Tm <= Tp:
        if Tm < -65535 or Tp > 65535:
            raise FormatError('T range')
        nsym = Tp - Tm + 2
    else:
        if (Tm, Tp) != (1, 0):
            raise FormatError('T- > T+ other than (1,0)')
        nsym = 1
    WH = W * H
    if E > WH:
        raise FormatError('E > WH')
    pos = 40
    if pos + Lt > len(st) or Lt < 4:
        raise FormatError('table does not fit')
    Ld, = struct.unpack_from('<I', st, pos)
    if not (nsym <= Ld <= 10 * nsym):
        raise FormatError('Ld range')
    table = general_decode(st[pos + 4:pos + Lt], Ld)
    count = read_varints(table, nsym, WH)
    if sum(count) != WH:
        raise FormatError('counts do not add to W*H')
    if count[-1] != E:
        raise FormatError('ESC count != E')
    pos += Lt
    f = freqs_from_counts(count, P, WH)
    cum = [0] * nsym
    for s in range(1, nsym):
        cum[s] = cum[s - 1] + f[s - 1]
    # slot -> symbol lookup
    sym_lut = [0] * (1 << P)
    for s in range(nsym):
        for sl in range(cum[s], cum[s] + f[s]):
            sym_lut[sl] = s
    seglen = 1 << S
    nseg = (WH + seglen - 1) // seglen
    if pos + 4 * nseg > len(st):
        raise FormatError('segment lengths do not fit')
    lens = struct.unpack_from('<%dI' % nseg, st, pos)
    pos += 4 * nseg
    syms = []
    for si in range(nseg):
        n = min(seglen, WH - si * seglen)
        if pos + lens[si] > len(st):
            raise FormatError('segment does not fit')
        syms += rans_decode_segment(st[pos:pos + lens[si]], n, f, cum, P, sym_lut.__getitem__)
        pos += lens[si]
    if pos + 2 * E != len(st):
        raise FormatError('total length mismatch: %d vs %d' % (pos + 2 * E, len(st)))
    escs = struct.unpack_from('<%dH' % E, st, pos)
    if sum(1 for s in syms if s == nsym - 1) != E:
        raise FormatError('ESC symbols != E')
    return dict(N=N, M=M, P=P, W=W, H=H, T=T, Tm=Tm, Tp=Tp, S=S, nsym=nsym, count=count,
                syms=syms, escs=escs)


def paper_decode(st, residuals=None):
    """Section 2: an image stream of the paper profile -> (big-endian samples, W, H).
    With a list as residuals, every pixel's x - pred is appended to it in
    raster order (what an encoder codes: tests/golden/recode_paper.py)."""
    d = paper_entropy_decode(st)
    N, M, W, H, Tm = d['N'], d['M'], d['W'], d['H'], d['Tm']
    nsym, syms, escs = d['nsym'], d['syms'], d['escs']
    WH = W * H
    # reconstruction
    X = [[0] * W for _ in range(H)]
    maxd = N  # lags needed: 0..N
    # prefix sums over q of P_d[q] for rows < m: C[d][q] = sum_{q'<q} P_d[q']
    Pd = [[0] * W for _ in range(maxd + 1)]
    ei = 0
    idx = 0
    for m in range(H):
        xr = X[m]
        if m >= 1:
            prev = X[m - 1]
            for d in range(maxd + 1):
                Pdd = Pd[d]
                for q in range(W - d):
                    Pdd[q] += prev[q] * prev[q + d]
            C = []
            for d in range(maxd + 1):
                cc = [0] * (W + 1)
                acc = 0
                Pdd = Pd[d]
                for q in range(W):
                    acc += Pdd[q]
                    cc[q + 1] = acc
                C.append(cc)
        for n in range(W):
            if m == 0:
                pred = 0 if n == 0 else xr[n - 1]
            elif n == 0:
                pred = X[m - 1][0]
            elif n == 1:
                pred = xr[0]
            else:
                K = min(n, N)
                R = 1 if n <= N else min(n - N + 1, M)
                k = min(K, m * R)

                def wsum(d, c):  # sum over w=0..R-1 of P_d[c-w]
                    return C[d][c + 1] - C[d][c - R + 1]
                A = [[0.0] * k for _ in range(k)]
                for r in range(k):
                    for s_ in range(r + 1):
                        v = float(wsum(r - s_, n - 1 - r))
                        A[r][s_] = v
                        A[s_][r] = v
                bv = [float(wsum(r + 1, n - 1 - r)) for r in range(k)]
                pred = ldl_predict(A, bv, k, xr, n)
            s = syms[idx]
            idx += 1
            if s == nsym - 1:
                val = escs[ei]
                ei += 1
            else:
                val = pred + Tm + s
                if not (0 <= val <= 65535):
                    raise FormatError('reconstructed value out of range at (%d,%d)' % (m, n))
            xr[n] = val
            if residuals is not None:
                residuals.append(val - pred)
    out = bytearray(2 * WH)
    o = 0
    for m in range(H):
        for v in X[m]:
            bits = v ^ 0x8000
            out[o] = bits >> 8
            out[o + 1] = bits & 0xFF
            o += 2
    return bytes(out), W, H


# ---------------------------------------------------------------- container (1)
MAGIC = b'\x89AURP\r\n\x1a'


def parse_container(data):
    if len(data) < 40 or data[:8] != MAGIC:
        raise FormatError('bad magic')
    ver, flags, nchunk, orig_size, h_orig, h_stream = struct.unpack_from('<HHIQQQ', data, 8)
    if ver != 1 or flags != 0:
        raise FormatError('version/flags')
    if xxh3_64(data[40:]) != h_stream:
        raise FormatError('stream checksum mismatch')
    chunks = []
    pos = 40
    total = 0
    for ci in range(nchunk):
        if pos + 24 > len(data):
            raise FormatError('chunk header does not fit')
        method = data[pos]
        if data[pos + 1:pos + 8] != b'\0' * 7:
            raise FormatError('chunk reserved')
        raw, enc = struct.unpack_from('<QQ', data, pos + 8)
        pos += 24
        if method > 3:
            raise FormatError('chunk method %d' % method)
        if raw == 0:
            raise FormatError('raw length 0')
        if pos + enc > len(data):
            raise FormatError('payload past end')
        if total + raw > orig_size:
            raise FormatError('restores past original size')
        if method == 0 and raw != enc:
            raise FormatError('stored lengths differ')
        if method in (1, 3) and raw >= 4096 * enc:
            raise FormatError('absurd ratio')
        chunks.append((method, raw, enc, total, data[pos:pos + enc]))
        total += raw
        pos += enc
    if pos != len(data):
        raise FormatError('bytes after last chunk')
    if total != orig_size:
        raise FormatError('raw lengths do not add to original size')
    return dict(version=ver, nchunk=nchunk, orig_size=orig_size, h_orig=h_orig,
                h_stream=h_stream, chunks=chunks)


def image_chunks(data):
    """(offset in the original, image stream) of each image chunk (method 2)
    of a .aurp file, in order."""
    return [(off, pl) for method, _raw, _enc, off, pl in parse_container(data)['chunks'] if method == 2]


def decode(data):
    """Section 1: the original bytes of a .aurp file."""
    c = parse_container(data)
    out = bytearray()
    for method, raw, enc, off, pl in c['chunks']:
        if method == 0:
            rb = pl
        elif method == 1:
            rb = general_decode(pl, raw)
        elif method == 3:
            raise FormatError('a text chunk: section 5.2 is not in this decoder')
        else:
            rb, W, H = paper_decode(pl)
            if W * H * 2 != raw:
                raise FormatError('W*H != raw/2')
        if len(rb) != raw:
            raise FormatError('chunk length')
        out += rb
    if xxh3_64(bytes(out)) != c['h_orig']:
        raise FormatError('original checksum mismatch')
    return bytes(out)

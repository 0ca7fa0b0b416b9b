#!/usr/bin/env python3
"""Makes the hand-made paper-profile golden streams (hand_paper_*.aurp).

The encoder always writes P = 20 and S = 12, and it never writes an image
chunk in which every pixel is an escape (nsym = 1: the stored chunk is
smaller), yet docs/FORMAT.md section 2 accepts P 12..20, S 8..24 and an
empty coded range, so a decoder must read them too.  This script takes a
paper-profile golden stream, decodes its image chunk with the decoder
written from the specification (tests/integration/spec_paper_decoder.py),
and codes the same pixels again by section 2's encoder rules with other
parameters: the predictor's residuals do not change, only their escape
threshold, frequencies and segments.  The results are listed in MANIFEST.old and decoded by the C
decoder (test_core_golden.c) and the specification's decoder
(test_format_paper.py).  Run once, from the repository root:

    python3 tests/golden/recode_paper.py

It refuses to write a stream that the specification's decoder does not
restore to the original, or that does not cover what its case is for."""
import struct
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "integration"))
from spec_paper_decoder import (decode, freqs_from_counts, general_model,  # noqa: E402
                                paper_decode, parse_container, xxh3_64)

GOLDEN = REPO / "tests" / "golden"
MASK32 = 0xFFFFFFFF


class RangeEncoder:
    """The binary range coder of FORMAT.md 5.1, encoding side (LZMA-style)."""

    def __init__(self):
        self.low, self.range, self.cache, self.cache_size = 0, MASK32, 0, 1
        self.out = bytearray()

    def _shift_low(self):
        if (self.low & MASK32) < 0xFF000000 or (self.low >> 32) != 0:
            carry = self.low >> 32
            temp = self.cache
            while True:
                self.out.append((temp + carry) & 0xFF)
                temp = 0xFF
                self.cache_size -= 1
                if self.cache_size == 0:
                    break
            self.cache = (self.low >> 24) & 0xFF
        self.cache_size += 1
        self.low = (self.low & 0x00FFFFFF) << 8

    def bit(self, p0, b):
        bound = (self.range >> 16) * p0
        if b == 0:
            self.range = bound
        else:
            self.low += bound
            self.range -= bound
        while self.range < (1 << 24):
            self.range = (self.range << 8) & MASK32
            self._shift_low()

    def finish(self):
        for _ in range(5):
            self._shift_low()
        return bytes(self.out)


def general_encode(data):
    """FORMAT.md 5.1: the general coding of data (the count tables)."""
    rc = RangeEncoder()

    def code_bit(p0, b):
        rc.bit(p0, b)
        return b
    general_model(len(data), code_bit, data)
    return rc.finish()


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def rans_encode_segment(syms, f, cum, P):
    """FORMAT.md 2.5, encoding: symbols in reverse, bytes back to front."""
    x = 1 << 23
    back = bytearray()  # the bytes in the order they are produced
    unit = ((1 << 23) >> P) << 8
    for s in reversed(syms):
        while x >= unit * f[s]:
            back.append(x & 0xFF)
            x >>= 8
        x = ((x // f[s]) << P) + (x % f[s]) + cum[s]
    return struct.pack("<I", x) + bytes(reversed(back))


def loop_takes_back(count, P, WH):
    """Whether 2.3's `while diff < 0` loop runs for these counts."""
    f = [max((c << P) // WH, 1 if c else 0) for c in count]
    return sum(f) > (1 << P)


def symbols(res, xs, T):
    """FORMAT.md 2.2: T-, T+, the counts, the symbols and the escape values
    of the residuals res (raster order) of the samples xs under threshold T."""
    hist = {}
    for e in res:
        hist[e] = hist.get(e, 0) + 1
    coded = [e for e, c in hist.items() if c >= max(T, 1)]
    Tm, Tp = (min(coded), max(coded)) if coded else (1, 0)
    nsym = Tp - Tm + 2 if coded else 1
    count, syms, escs = [0] * nsym, [], []
    for e, x in zip(res, xs):
        s = e - Tm if Tm <= e <= Tp else nsym - 1
        if s == nsym - 1:
            escs.append(x)
        count[s] += 1
        syms.append(s)
    return Tm, Tp, count, syms, escs


def paper_stream(N, M, W, H, T, P, S, res, xs):
    """A paper image stream (FORMAT.md 2) of residuals res of samples xs."""
    WH = W * H
    Tm, Tp, count, syms, escs = symbols(res, xs, T)
    nsym = len(count)
    f = freqs_from_counts(count, P, WH)
    cum = [0] * nsym
    for s in range(1, nsym):
        cum[s] = cum[s - 1] + f[s - 1]
    seglen = 1 << S
    segs = [rans_encode_segment(syms[a:a + seglen], f, cum, P) for a in range(0, WH, seglen)]
    table = b"".join(varint(c) for c in count)
    coded_table = struct.pack("<I", len(table)) + general_encode(table)
    head = struct.pack("<BBBBIIIiiB3xIQ", 1, N, M, P, W, H, T, Tm, Tp, S, len(coded_table), len(escs))
    assert len(head) == 40
    stream = (head + coded_table + b"".join(struct.pack("<I", len(s)) for s in segs) + b"".join(segs)
              + struct.pack("<%dH" % len(escs), *escs))
    return stream, dict(P=P, S=S, T=T, nsym=nsym, escapes=len(escs),
                        takes_back=loop_takes_back(count, P, WH))


def recode(src_name, T, P, S):
    """The .aurp of src_name with its image chunk coded again under T, P, S
    (the same predictor, N and M: the residuals do not change)."""
    data = (GOLDEN / f"{src_name}.aurp").read_bytes()
    c = parse_container(data)
    out = bytearray(data[:40])
    meta = None
    for method, raw, enc, _off, payload in c["chunks"]:
        if method == 2:
            res = []
            be, W, H = paper_decode(payload, res)
            xs = [((be[2 * i] << 8) | be[2 * i + 1]) ^ 0x8000 for i in range(W * H)]
            N, M = payload[1], payload[2]  # FORMAT.md 2's header: the predictor stays
            payload, meta = paper_stream(N, M, W, H, T, P, S, res, xs)
        out += struct.pack("<B7xQQ", method, raw, len(payload)) + payload
    out[32:40] = struct.pack("<Q", xxh3_64(bytes(out[40:])))
    return bytes(out), meta


NO_BIN = 2**31 - 1  # a threshold no residual's count reaches: every pixel an escape

# name, source stream, T, P, S, what the case must cover
CASES = [
    ("hand_paper_p12_s8", "trex16", 0, 12, 8, lambda m: m["takes_back"] and m["escapes"] == 0),
    ("hand_paper_p16_s24", "trex16", 13, 16, 24, lambda m: m["escapes"] > 0),
    ("hand_paper_escaped", "spectrum", NO_BIN, 20, 12, lambda m: m["nsym"] == 1),
    ("hand_paper_escaped_p12_s9", "degenerate", NO_BIN, 12, 9, lambda m: m["nsym"] == 1),
]


def main():
    manifest = {}
    for line in (GOLDEN / "MANIFEST").read_text().splitlines():
        f = line.split()
        manifest[f[0]] = f[8]
    for name, src, T, P, S, covers in CASES:
        stream, meta = recode(src, T, P, S)
        orig = (GOLDEN / f"{src}.orig").read_bytes()
        if decode(stream) != orig:
            sys.exit(f"{name}: the specification's decoder does not restore {src}.orig")
        if not covers(meta):
            sys.exit(f"{name}: does not cover its case: {meta}")
        (GOLDEN / f"{name}.aurp").write_bytes(stream)
        print(f"{name}.aurp {src} {manifest[src]}   # {meta}, {len(stream)} bytes")


if __name__ == "__main__":
    main()

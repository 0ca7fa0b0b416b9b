"""docs/FORMAT.md section 5.2 is enough to decode a text chunk: a decoder
written here from the specification alone (not from core/textcoder.c)
restores the header of a real frame from the chunk `aurorapack pack`
wrote.  It reads the priming text from the specification's own listing."""
import re

from conftest import REPO, run
from spec_paper_decoder import RangeDecoder, parse_container  # sections 5.1 and 1

FORMAT = REPO / "docs" / "FORMAT.md"


def spec_section_52():
    text = FORMAT.read_text()
    start = text.index("### 5.2 The text coder")
    return text[start:]


def priming_text():
    """The 55 cards listed in 5.2, each padded to 80 bytes."""
    sec = spec_section_52()
    listing = sec[sec.index("padded with spaces to 80 bytes:") :].split("\n\n")[1]
    cards = [line[4:] for line in listing.split("\n")]
    assert all(len(c) <= 80 for c in cards)
    prime = "".join(c.ljust(80) for c in cards).encode("ascii")
    assert len(prime) == 4400, len(prime)
    return prime


def knots():
    sec = spec_section_52()
    m = re.search(r"`K = ([0-9, \n]+)`", sec)
    k = [int(v) for v in m.group(1).replace("\n", " ").split(",")]
    assert len(k) == 33
    return k


K = knots()
M32 = 0xFFFFFFFF


def squash(d):
    if d > 2047:
        return 4095
    if d < -2047:
        return 1
    w = d % 128
    k = d // 128 + 16
    return (K[k] * (128 - w) + K[k + 1] * w + 64) >> 7


STRETCH = []
for p in range(4096):
    for d in range(-2047, 2048):
        if squash(d) >= p:
            STRETCH.append(d)
            break
    else:
        STRETCH.append(2047)


def trunc_div(a, b):
    q = abs(a) // b
    return q if a >= 0 else -q


class Prob:
    """Tables of adaptive probabilities (v, c): dicts keyed by index."""

    def __init__(self):
        self.v = {}
        self.c = {}

    def st(self, i):
        return STRETCH[self.v.get(i, 32768) >> 4]

    def update(self, i, bit):
        v, c = self.v.get(i, 32768), self.c.get(i, 0)
        t = 65535 if bit else 0
        v = v + trunc_div((t - v) * (131072 // (2 * c + 3)), 65536)
        self.v[i] = v
        self.c[i] = min(c + 1, 255)


def decode_text(payload, n):
    prime = priming_text()
    S = bytearray(prime)
    G = 0x2545F491
    models = [Prob() for _ in range(6)]
    match_p = Prob()
    weights = [[16384] * 7 for _ in range(24)]
    last = [0] * 4096
    mp = length = 0
    rd = None

    def byte(i):
        return S[i] if i >= 0 else 0

    total = len(prime) + n
    for i in range(total):
        coding = i >= len(prime)
        if coding and rd is None:
            rd = RangeDecoder(payload)
        c1, c2, c3, c4 = byte(i - 1), byte(i - 2), byte(i - 3), byte(i - 4)
        a = S[i - 80] if i >= 80 else 0
        x = [0, (c1 * G) & M32, ((c1 | c2 << 8) * G) & M32, ((c1 | c2 << 8 | c3 << 16) * G) & M32,
             ((c1 | c2 << 8 | c3 << 16 | c4 << 24) * G) & M32, ((a | (i % 80) << 8) * G) & M32]
        if length > 0 and S[mp] == c1 and mp + 1 < i:
            length = min(length + 1, 15)
            mp += 1
        else:
            length = 0
        if i >= 4:
            h = (((c1 | c2 << 8 | c3 << 16 | c4 << 24) * 0x9E3779B1) & M32) >> 20
            if length == 0 and last[h] > 0:
                mp, length = last[h], 1
            last[h] = i
        node = 1
        rows = None
        for b in range(7, -1, -1):
            if b in (7, 3):
                u = 0 if b == 7 else 1 + (node & 15)
                rows = [u] + [(((x[k] + u) * 0x9E3779B1) & M32) >> 22 for k in range(1, 6)]
            j = 3 - (b % 4)
            e = (1 << j) + (node % (1 << j))
            idx = [rows[k] * 16 + e for k in range(6)]
            s = [models[k].st(idx[k]) for k in range(6)]
            mstate, midx = 0, None
            if length > 0 and (S[mp] + 256) >> (b + 1) == node:
                q = (S[mp] >> b) & 1
                midx = 2 * length + q
                s.append(match_p.st(midx))
                mstate = 1 if length < 8 else 2
            else:
                s.append(0)
            ws = 8 * mstate + b
            p1 = squash(sum(w * v for w, v in zip(weights[ws], s)) >> 16)
            if coding:
                y = rd.bit((4096 - p1) << 4)
            else:
                y = (S[i] >> b) & 1
            err = 4096 * y - p1
            weights[ws] = [max(-(1 << 24), min(1 << 24, w + ((v * err + 512) >> 10)))
                           for w, v in zip(weights[ws], s)]
            for k in range(6):
                models[k].update(idx[k], y)
            if midx is not None:
                match_p.update(midx, y)
            node = (node << 1) | y
        if coding:
            S.append(node & 255)
    rd.finish()  # 5.1's end checks
    return bytes(S[len(prime):])


def test_a_decoder_from_the_specification_restores_a_real_header(aurorapack, shared_frames, tmp_path):
    frame = next(f for f in shared_frames if "trex" in f.name)
    packed = tmp_path / "f.aurp"
    run([aurorapack, "pack", "-q", "-o", packed, frame], check_rc=0)
    method, raw, _, _, payload = parse_container(packed.read_bytes())["chunks"][0]
    assert method == 3, "lsmix packs code the header as a text chunk"
    original = frame.read_bytes()[:raw]
    assert decode_text(payload, raw) == original

"""docs/FORMAT.md sections 1, 2 and 5.1 are enough to decode the paper
profile: spec_paper_decoder.py, written from the specification alone (by a
reader who saw no source of the codec), restores every paper-profile golden
stream to its original bit for bit, checksums included, and refuses
damage the way the specification says.  The hand-made golden streams
(tests/golden/recode_paper.py: P, S and escape ranges the encoder never
writes) are restored by it and by the C decoder (test_core_golden.c), and
the recoder's encoding rules, taken from the specification, give the C
encoder's files byte for byte."""
import struct
import sys

import pytest

from conftest import REPO
from spec_paper_decoder import FormatError, decode, image_chunks, paper_entropy_decode, xxh3_64

GOLDEN = REPO / "tests" / "golden"
sys.path.insert(0, str(GOLDEN))
import recode_paper  # noqa: E402  (the section 2 encoder of the hand-made streams)


def paper_cases():
    cases = []
    for line in (GOLDEN / "MANIFEST").read_text().splitlines():
        f = line.split()
        if len(f) == 9 and f[1] == "paper":
            cases.append((f[0], int(f[8], 16)))
    return cases


def test_the_golden_set_has_every_kind_of_paper_stream():
    names = {n for n, _ in paper_cases()}
    # coded images (spectrum, degenerate systems, N = 32, a real frame with
    # several segments), a stored image chunk and a file of bytes only
    assert {"spectrum", "degenerate", "order32", "trex16", "stored", "general"} <= names


@pytest.mark.parametrize("name,checksum", paper_cases())
def test_a_decoder_from_the_specification_restores_the_golden_stream(name, checksum):
    packed = (GOLDEN / f"{name}.aurp").read_bytes()
    orig = (GOLDEN / f"{name}.orig").read_bytes()
    assert xxh3_64(orig) == checksum
    assert decode(packed) == orig


def hand_made_cases():
    """MANIFEST.old's hand_paper_* streams: (stream, original, checksum)."""
    cases = []
    for line in (GOLDEN / "MANIFEST.old").read_text().splitlines():
        f = line.split()
        if len(f) >= 3 and f[0].startswith("hand_paper_"):
            cases.append((f[0][:-len(".aurp")], f[1], int(f[2], 16)))
    return cases


@pytest.mark.parametrize("name,orig_name,checksum", hand_made_cases())
def test_a_decoder_from_the_specification_restores_the_hand_made_stream(name, orig_name, checksum):
    orig = (GOLDEN / f"{orig_name}.orig").read_bytes()
    assert xxh3_64(orig) == checksum
    assert decode((GOLDEN / f"{name}.aurp").read_bytes()) == orig


def test_the_hand_made_streams_cover_what_the_encoder_never_writes():
    """P other than 20 (12 and 16), S other than 12 (below and one segment
    for the whole image), zero-count symbols, 2.3's loop that takes
    frequencies back, and the empty coded range (nsym = 1): each in a
    stream, so that both decoders meet it."""
    seen = []
    for name, _orig, _sum in hand_made_cases():
        for _off, st in image_chunks((GOLDEN / f"{name}.aurp").read_bytes()):
            d = paper_entropy_decode(st)
            seen.append(dict(P=d["P"], S=d["S"], nsym=d["nsym"], zero=0 in d["count"],
                             takes_back=recode_paper.loop_takes_back(d["count"], d["P"], d["W"] * d["H"]),
                             segments=-(-d["W"] * d["H"] // (1 << d["S"]))))
    assert {12, 16} <= {s["P"] for s in seen}
    assert any(s["S"] == 8 and s["segments"] > 32 for s in seen)
    assert any(s["S"] == 24 and s["segments"] == 1 for s in seen)
    assert any(s["takes_back"] for s in seen)
    assert any(s["zero"] for s in seen)
    assert sum(s["nsym"] == 1 for s in seen) >= 2


@pytest.mark.parametrize("name", ["trex16", "spectrum", "degenerate", "order32"])
def test_the_specification_s_encoding_rules_give_the_encoder_s_bytes(name):
    """recode_paper.py codes a golden stream's residuals again by FORMAT.md
    2.2-2.5 and 5.1; with the encoder's T, P = 20 and S = 12 it must write the
    C encoder's file byte for byte (so the hand-made streams are what any
    encoder following the specification would write with their P and S)."""
    T = next(int(line.split()[7]) for line in (GOLDEN / "MANIFEST").read_text().splitlines()
             if line.split()[0] == name)
    stream, _meta = recode_paper.recode(name, T, 20, 12)
    assert stream == (GOLDEN / f"{name}.aurp").read_bytes()


def test_the_hand_made_streams_are_what_the_script_writes():
    for name, src, T, P, S, _covers in recode_paper.CASES:
        stream, _meta = recode_paper.recode(src, T, P, S)
        assert stream == (GOLDEN / f"{name}.aurp").read_bytes(), name


def with_stream_checksum(b):
    """b with the header's stream checksum recomputed (FORMAT.md 1)."""
    b = bytearray(b)
    b[32:40] = struct.pack("<Q", xxh3_64(bytes(b[40:])))
    return bytes(b)


def test_damage_is_refused_as_the_specification_says():
    packed = (GOLDEN / "spectrum.aurp").read_bytes()
    with pytest.raises(FormatError, match="stream checksum"):
        decode(packed[:-1] + bytes([packed[-1] ^ 1]))
    with pytest.raises(FormatError, match="after last chunk"):
        decode(with_stream_checksum(packed + b"\0"))
    bad_method = bytearray(packed)
    bad_method[40] = 4  # the first chunk's method: 0-3 only
    with pytest.raises(FormatError, match="method"):
        decode(with_stream_checksum(bad_method))

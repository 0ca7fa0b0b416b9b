"""docs/FORMAT.md section 3 is enough to decode the lsmix profile:
spec_lsmix_decoder.py, written from the specification alone (by a reader
who saw no source of the codec), restores the image of lsmix golden
streams pixel for pixel: the predictor sets 0, 1, 2 and 3 (with its
weighted LS training), BG, the cascade's
narrow support, the segments with and without their lengths, the
carry, and the adaptive sign and top raw bit.  Python is slow, so the largest streams (1024 x 64 and 96 rows) are
left out; the decoder reproduced them too when it was written."""
import struct

import pytest

from conftest import REPO
from spec_lsmix_decoder import Bad, decode_lsmix
from spec_paper_decoder import image_chunks

GOLDEN = REPO / "tests" / "golden"

# name of the stream, name of its original (MANIFEST or MANIFEST.old)
CASES = [
    ("lsmix_20000px", "lsmix_20000px"),  # set 0 with BG, K = 1, M = 3
    ("lsmix_degenerate", "lsmix_degenerate"),  # set 3, K = 16, M = 17, singular systems
    ("lsmix_spectrum", "lsmix_spectrum"),  # set 3 with f = 1: the weighted LS training
    ("lsmix_echelle", "lsmix_echelle"),  # set 3 with f = 1, the cascade and the adaptive sign
    ("v7_lsmix_echelle", "lsmix_echelle"),  # the same without the adaptive sign
    ("lsmix_echelle_arc", "lsmix_echelle_arc"),  # set 3 with f = 2 and the cascade
    ("lsmix_trex16", "lsmix_trex16"),  # a real frame, 1024 x 16
    ("lsmix_edges", "lsmix_edges"),  # K' = 0, counts halved, a last segment carried whole
    ("lsmix_column", "lsmix_column"),  # W = 1
    ("v6_lsmix_spectrum", "lsmix_spectrum"),  # set 2 with f = 1
    ("v6_lsmix_echelle", "lsmix_echelle"),  # set 2 with the cascade
    ("v6_lsmix_degenerate", "lsmix_degenerate"),  # set 2, K = 16, M = 17
    ("v0_lsmix_degenerate", "lsmix_degenerate"),  # set 1, no BG, counts from 0 (byte 23 = 0)
    ("v2_lsmix_spectrum", "lsmix_spectrum"),  # set 1 with BG
    ("v3_lsmix_degenerate", "lsmix_degenerate"),  # the segments' lengths
    ("v4_lsmix_20000px", "lsmix_20000px"),  # segments of 2^14 without the carry
]


def image_chunk(packed):
    """(offset in the original, payload) of the file's one image chunk (FORMAT.md 1)."""
    chunks = image_chunks(packed)
    assert len(chunks) == 1, "one image chunk"
    return chunks[0]


def pixels(orig, off, w, h):
    return [
        [((orig[off + 2 * (m * w + n)] << 8) | orig[off + 2 * (m * w + n) + 1]) ^ 0x8000 for n in range(w)]
        for m in range(h)
    ]


@pytest.mark.parametrize("stream,original", CASES)
def test_a_decoder_from_the_specification_restores_the_golden_image(stream, original):
    packed = (GOLDEN / f"{stream}.aurp").read_bytes()
    off, payload = image_chunk(packed)
    assert payload[0] == 2, "an lsmix image stream"
    w, h = struct.unpack_from("<II", payload, 4)
    want = pixels((GOLDEN / f"{original}.orig").read_bytes(), off, w, h)
    got_w, got_h, got = decode_lsmix(payload, {"ref": want})
    assert (got_w, got_h) == (w, h)
    assert got == want


def test_the_cases_cover_what_they_claim():
    seen = set()
    for stream, _ in CASES:
        _, p = image_chunk((GOLDEN / f"{stream}.aurp").read_bytes())
        seen.add(("set", p[22]))
        seen.update(("flag", b) for b in range(7) if p[23] >> b & 1)
    assert {("set", 0), ("set", 1), ("set", 2), ("set", 3)} <= seen
    assert {("flag", b) for b in range(7) if b != 4} <= seen  # the wide support: lsmix_trex96, too slow here


def test_a_damaged_stream_is_refused_by_the_specifications_checks():
    _, payload = image_chunk((GOLDEN / "lsmix_spectrum.aurp").read_bytes())
    with pytest.raises(Bad):
        decode_lsmix(payload[:-1])  # the last segment ends before its last pixel
    with pytest.raises(Bad):
        decode_lsmix(payload + b"\0")  # nothing may follow the last segment
    bad = bytearray(payload)
    bad[2] = 8  # an even M
    with pytest.raises(Bad):
        decode_lsmix(bytes(bad))

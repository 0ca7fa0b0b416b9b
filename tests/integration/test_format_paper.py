"""docs/FORMAT.md sections 1, 2 and 5.1 are enough to decode the paper
profile: spec_paper_decoder.py, written from the specification alone (by a
reader who saw no source of the codec), restores every paper-profile golden
stream to its original bit for bit, checksums included, and refuses
damage the way the specification says."""
import struct

import pytest

from conftest import REPO
from spec_paper_decoder import FormatError, decode, xxh3_64

GOLDEN = REPO / "tests" / "golden"


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

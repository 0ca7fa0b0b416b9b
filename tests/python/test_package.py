"""The installed aurorapack package against real astropy and numpy: read and
open equal to astropy on the restored file, unpack/verify/info/pack with the
CLI's meaning, errors that name the file and the reason."""
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from astropy.io import fits

import aurorapack
from conftest import REPO, simulate


def test_the_installed_package_is_tested():
    assert REPO / "python" not in Path(aurorapack.__file__).resolve().parents
    assert aurorapack.library_version() == "1.0.0"


def test_read_gives_what_astropy_gives_for_the_restored_file(packed_real):
    for original, packed in packed_real:
        with fits.open(original) as hdul:
            want = next(h.data for h in hdul if h.is_image and h.data is not None)
            got = aurorapack.read(packed)
            assert got.dtype == want.dtype and got.shape == want.shape, original.name
            assert np.array_equal(got, want), original.name


def test_open_equals_opening_the_restored_file(packed_real, tmp_path):
    for original, packed in packed_real:
        with fits.open(original) as want, aurorapack.open(packed) as got:
            assert len(got) == len(want)
            for a, b in zip(got, want):
                assert type(a) is type(b)
                assert a.header.tostring() == b.header.tostring()
                if b.data is None:
                    assert a.data is None
                elif isinstance(b.data, np.ndarray) and b.data.dtype.names is None:
                    assert np.array_equal(a.data, b.data)
                else:
                    assert a.data.tobytes() == b.data.tobytes()
            # written back, the in-memory HDUList writes what the file's HDUList writes
            out, ref = tmp_path / f"{original.name}.got", tmp_path / f"{original.name}.want"
            got.writeto(out)
            want.writeto(ref)
            assert out.read_bytes() == ref.read_bytes()


def test_open_uses_no_temporary_file(packed_real, tmp_path, monkeypatch):
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-such-dir"))
    with aurorapack.open(packed_real[0][1]) as hdul:
        assert hdul[0].header["SIMPLE"]
    assert not (tmp_path / "no-such-dir").exists()


def test_unpack_verify_info_pack_as_the_cli(tmp_path, aurorapack_cli):
    src = simulate(tmp_path / "f.fits", 200, 40, seed=3)
    original = src.read_bytes()
    packed = aurorapack.pack(src)
    assert packed == tmp_path / "f.fits.aurp"
    # the CLI packs the very same bytes
    cli = tmp_path / "cli.aurp"
    subprocess.run([str(aurorapack_cli), "pack", "-q", "-o", str(cli), str(src)], check=True)
    assert cli.read_bytes() == packed.read_bytes()
    with pytest.raises(aurorapack.AurorapackError, match="already exists"):
        aurorapack.pack(src)
    src.unlink()
    assert aurorapack.unpack(packed) == src
    assert src.read_bytes() == original
    assert aurorapack.verify(packed) == len(original)
    info = aurorapack.info(packed)
    want = json.loads(subprocess.run([str(aurorapack_cli), "info", "--json", str(packed)],
                                     check=True, capture_output=True, text=True).stdout)[0]
    assert info == want
    assert info["chunks"][1]["width"] == 200 and info["chunks"][1]["height"] == 40
    other = aurorapack.pack(src, tmp_path / "n4.aurp", order=4, equations=2, threshold=0,
                            profile="paper")
    assert aurorapack.info(other)["chunks"][1]["N"] == 4
    assert aurorapack.unpack_bytes(other.read_bytes()) == original


def test_errors_name_the_file_and_the_reason(tmp_path):
    src = simulate(tmp_path / "f.fits", 64, 16)
    packed = aurorapack.pack(src)
    data = packed.read_bytes()
    cut = tmp_path / "cut.fits.aurp"
    cut.write_bytes(data[:-100])
    with pytest.raises(aurorapack.CorruptStreamError) as e:
        aurorapack.read(cut)
    assert e.value.path == str(cut) and str(e.value).startswith(f"{cut}: ")
    with pytest.raises(aurorapack.CorruptStreamError) as e:
        aurorapack.info(cut)
    assert "truncated" in e.value.reason and e.value.details["truncated"]
    assert e.value.details["original_size"] == src.stat().st_size
    with pytest.raises(aurorapack.OutputLimitError, match="over the limit of 100"):
        aurorapack.verify(packed, max_output=100)
    with pytest.raises(aurorapack.AurorapackError, match="cannot read"):
        aurorapack.read(tmp_path / "missing.aurp")
    notfits = tmp_path / "notes.txt"
    notfits.write_text("not a frame\n" * 50)
    with pytest.raises(aurorapack.NotFitsError, match="notes.txt.*not a FITS file"):
        aurorapack.pack(notfits)
    back = aurorapack.pack(notfits, any=True)
    with pytest.raises(aurorapack.AurorapackError, match="no image|not a FITS"):
        aurorapack.read(back)
    flipped = bytearray(data)
    flipped[-30] ^= 4
    bad = tmp_path / "bad.fits.aurp"
    bad.write_bytes(bytes(flipped))
    with pytest.raises(aurorapack.CorruptStreamError, match="damaged"):
        aurorapack.verify(bad)
    assert not (tmp_path / "bad.fits").exists()
    with pytest.raises(aurorapack.AurorapackError):
        aurorapack.unpack(bad)
    assert not (tmp_path / "bad.fits").exists()

"""aurorapack unpack creates the restored file as open(..., 0666) would:
the umask decides its permissions (issue 9, item 7)."""
import os
import stat
import subprocess

import pytest

from conftest import run


@pytest.mark.parametrize("mask, want", [(0o077, 0o600), (0o022, 0o644), (0o002, 0o664)])
def test_unpack_honours_the_umask(aurorapack, sim_fits, tmp_path, mask, want):
    original = sim_fits("frame.fits", 64, 32)
    packed = tmp_path / "frame.fits.aurp"
    run([aurorapack, "pack", "--cpu", "-o", packed, original], check_rc=0)
    restored = tmp_path / f"restored_{mask:03o}.fits"
    proc = subprocess.run([str(aurorapack), "unpack", "-o", str(restored), str(packed)],
                          preexec_fn=lambda: os.umask(mask), capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert stat.S_IMODE(restored.stat().st_mode) == want
    assert restored.read_bytes() == original.read_bytes()

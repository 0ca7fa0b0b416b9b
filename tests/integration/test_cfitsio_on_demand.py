"""cfitsio is opened on the first FITS header, not linked
(fits/cfitsio_api.h): a process that only unpacks never loads it and the
libraries it brings in; one that packs loads it; where it cannot be opened,
pack refuses a FITS file with the reason (or, with --any, keeps it as
general bytes), and the daemon does not start.  The loader's trace comes
from the real dynamic loader (LD_DEBUG=libs)."""
import os
import subprocess
import time
from pathlib import Path

from conftest import run

BUILD = Path(os.environ.get("AURP_BUILD", Path(__file__).resolve().parents[2] / "build"))
MISSING = "/nonexistent/libcfitsio.so.10"


def loaded_libraries(args):
    """Runs args under LD_DEBUG=libs; returns (the process, the names of the
    shared objects the loader opened)."""
    env = dict(os.environ, LD_DEBUG="libs")
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=120, env=env)
    opened = {line.split("calling init:")[1].strip().rsplit("/", 1)[-1]
              for line in proc.stderr.splitlines() if "calling init:" in line}
    return proc, opened


def needed(path):
    out = run(["readelf", "-d", path], check_rc=0).stdout
    return [line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]


def test_programs_and_library_do_not_link_cfitsio(aurorapack):
    for path in (aurorapack, BUILD / "bin" / "aurorad", BUILD / "lib" / "libaurorapack.so"):
        libs = needed(path)
        assert libs, f"{path}: readelf found no NEEDED entries"
        assert not [n for n in libs if "cfitsio" in n], f"{path} links {libs}"


def test_unpack_never_loads_cfitsio_and_pack_does(aurorapack, sim_fits, tmp_path):
    frame = sim_fits("f.fits", 128, 32)
    packed = tmp_path / "f.aurp"
    proc, opened = loaded_libraries([aurorapack, "pack", "-q", "-o", packed, frame])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert any(n.startswith("libcfitsio.so") for n in opened), sorted(opened)
    for cmd in (["unpack", "-q", "-o", tmp_path / "back.fits", packed], ["verify", packed], ["info", packed]):
        proc, opened = loaded_libraries([aurorapack] + cmd)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert not [n for n in opened if "cfitsio" in n or "curl" in n or "gnutls" in n], (cmd, sorted(opened))
    assert (tmp_path / "back.fits").read_bytes() == frame.read_bytes()


def test_pack_without_cfitsio_refuses_fits_and_any_keeps_the_bytes(aurorapack, sim_fits, tmp_path):
    frame = sim_fits("f.fits", 128, 32)
    env = dict(os.environ, AURP_CFITSIO_LIB=MISSING)
    out = tmp_path / "f.aurp"
    proc = run([aurorapack, "pack", "-o", out, frame], env=env)
    assert proc.returncode == 1
    assert "FITS headers cannot be read here: cannot load cfitsio" in proc.stderr, proc.stderr
    assert MISSING in proc.stderr
    assert not out.exists()
    run([aurorapack, "pack", "--any", "-q", "-o", out, frame], env=env, check_rc=0)
    run([aurorapack, "unpack", "-q", "-o", tmp_path / "back", out], env=env, check_rc=0)
    assert (tmp_path / "back").read_bytes() == frame.read_bytes()
    # the same file with cfitsio found: packed as a FITS image, much smaller
    fits_packed = tmp_path / "g.aurp"
    run([aurorapack, "pack", "-q", "-o", fits_packed, frame], check_rc=0)
    assert fits_packed.stat().st_size < out.stat().st_size


def test_daemon_without_cfitsio_does_not_start(daemon_factory):
    d = daemon_factory()
    d.start(env={"AURP_CFITSIO_LIB": MISSING}, wait_ready=False)
    end = time.monotonic() + 20
    while d.proc.poll() is None and time.monotonic() < end:
        time.sleep(0.05)
    assert d.proc.poll() == 1, d.log_text()
    failed = d.events("start_failed")
    assert failed and "cannot load cfitsio" in failed[0]["msg"], d.log_text()
    assert not d.events("started"), d.log_text()

"""Shared fixtures of the integration tests: the built programs, the shared
real frames, and a helper to run a program and capture what it says.

Environment: AURP_BUILD (the build directory, binaries in $AURP_BUILD/bin;
default <repo>/build) and AURP_SHARED_DATA (the real frames; default
tests/data/real, the copy of ../shared/data).
"""
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def build_dir() -> Path:
    return Path(os.environ.get("AURP_BUILD", REPO / "build"))


def program(name: str) -> Path:
    path = build_dir() / "bin" / name
    if not path.exists():
        pytest.fail(f"{path} is not built (make BUILD={build_dir()})")
    return path


def run(args, *, check_rc=None, timeout=120, **kw):
    """Runs args (str() of each); returns the CompletedProcess with text
    stdout/stderr.  check_rc: the exit status it must end with."""
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True,
                          timeout=timeout, **kw)
    if check_rc is not None:
        assert proc.returncode == check_rc, (
            f"{' '.join(map(str, args))}: exit {proc.returncode}, want {check_rc}\n"
            f"stdout: {proc.stdout}\nstderr: {proc.stderr}")
    return proc


@pytest.fixture(scope="session")
def aurorapack() -> Path:
    return program("aurorapack")


@pytest.fixture(scope="session")
def aurorasim() -> Path:
    return program("aurorasim")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    return Path(os.environ.get("AURP_SHARED_DATA", str(Path(__file__).resolve().parents[1] / "data" / "real")))


@pytest.fixture(scope="session")
def shared_frames(shared_data):
    frames = sorted(shared_data.glob("*.fits"))
    if not frames:
        pytest.skip(f"no shared frames in {shared_data}")
    return frames


@pytest.fixture
def sim_fits(aurorasim, tmp_path):
    """Factory: sim_fits(name, width, height, seed=1, index=0) writes one
    simulated frame with aurorasim --one into tmp_path and returns its path."""
    def make(name="sim.fits", width=256, height=64, seed=1, index=0):
        path = tmp_path / name
        run([aurorasim, "--one", path, "-W", width, "-H", height, "--seed", seed,
             "--index", index, "--start-time", "2014-07-15T13:29:40"], check_rc=0)
        return path
    return make


@pytest.fixture
def daemon_factory(tmp_path):
    """make(name="d", **config_overrides) -> a daemon_harness.Daemon in
    tmp_path/name (not started); every one made is cleaned up after the test."""
    from daemon_harness import Daemon
    made = []

    def make(name="d", **overrides):
        d = Daemon(tmp_path / name, **overrides)
        made.append(d)
        return d

    yield make
    for d in made:
        d.cleanup()

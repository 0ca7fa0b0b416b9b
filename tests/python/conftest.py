"""Fixtures of the Python package's tests (scripts/test-python.sh runs them
with the installed package): the built CLI, real frames, simulated frames."""
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("AURP_BUILD", REPO / "build"))


def tool(name: str) -> Path:
    p = BUILD / "bin" / name
    if not p.exists():
        pytest.fail(f"{p} is not built (make BUILD={BUILD})")
    return p


@pytest.fixture(scope="session")
def aurorapack_cli() -> Path:
    return tool("aurorapack")


@pytest.fixture(scope="session")
def real_frames():
    d = Path(os.environ.get("AURP_SHARED_DATA", REPO / "tests" / "data" / "real"))
    frames = sorted(d.glob("*.fits"))
    if not frames:
        pytest.skip(f"no real frames in {d}")
    return frames


@pytest.fixture(scope="session")
def packed_real(tmp_path_factory, real_frames, aurorapack_cli):
    """The real frames packed by the CLI: [(original, packed)]."""
    d = tmp_path_factory.mktemp("real")
    out = []
    for f in real_frames:
        p = d / (f.name + ".aurp")
        subprocess.run([str(aurorapack_cli), "pack", "-q", "-o", str(p), str(f)], check=True)
        out.append((f, p))
    return out


def simulate(path: Path, width: int, height: int, seed: int = 1, index: int = 0) -> Path:
    subprocess.run([str(tool("aurorasim")), "--one", str(path), "-W", str(width), "-H", str(height),
                    "--seed", str(seed), "--index", str(index), "-q"], check=True,
                   stdout=subprocess.DEVNULL)
    return path

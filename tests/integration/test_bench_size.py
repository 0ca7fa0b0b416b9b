"""scripts/bench-size.sh, the size table of `make bench`, on tiny frames:
which frames it measures, that its aurp column is the packed file, and that
it refuses a set it does not know."""
import os
import re
from pathlib import Path

import pytest

from conftest import REPO, build_dir, run

HELD_OUT = ["aurora:11:1", "aurora:12:0.5", "aurora:13:2", "dark:14:1", "dark:15:0.3",
            "bias:16:1", "twilight:17:0.7", "arc:18:0.5", "echelle:19:0.6",
            "echelle-arc:20:1.5", "aurora:21:5", "echelle:22:2"]


def bench_size(**env):
    for tool in ("bench_pixels", "noise_floor"):
        if not (build_dir() / "tests" / "bench" / tool).exists():
            pytest.fail(f"{tool} is not built (make BUILD={build_dir()} bench-tools)")
    e = dict(os.environ, BUILD=str(build_dir()), BENCH_SIM_SIZE="48x24", BENCH_EFFORTS="",
             BENCH_REPEAT="1", **env)
    return run([REPO / "scripts" / "bench-size.sh"], env=e, timeout=300)


def table_rows(out):
    """frame -> its fields, for the rows of the size table"""
    return {l.split()[0]: l.split() for l in out.splitlines()
            if re.match(r"(sim_|kast|trex)\S* +\d+ +\d+ ", l)}


def test_held_out_set_is_the_twelve_frames_of_other_seeds(tmp_path):
    r = bench_size(BENCH_SET="heldout")
    assert r.returncode == 0, r.stderr
    rows = table_rows(r.stdout)
    want = [f"sim_{k}_s{s}_l{l}" for k, s, l in (h.split(":") for h in HELD_OUT)]
    assert sorted(rows) == sorted(want), r.stdout  # no real frames, no bench seed
    assert "over 12 frames" in r.stdout
    assert "aurorapack pack " not in r.stdout  # no speed table by default
    # the aurp column is the whole packed file of the default profile
    k, s, l = HELD_OUT[3].split(":")
    frame = tmp_path / "f.fits"
    run([build_dir() / "bin" / "aurorasim", "--one", frame, "-q", "--kind", k, "--seed", s,
         "--level", l, "-W", 48, "-H", 24, "--start-time", "2014-07-15T00:00:00"], check_rc=0)
    run([build_dir() / "bin" / "aurorapack", "pack", "-o", tmp_path / "f.aurp", frame], check_rc=0)
    assert int(rows[f"sim_{k}_s{s}_l{l}"][2]) == (tmp_path / "f.aurp").stat().st_size


def test_unknown_set_is_refused():
    r = bench_size(BENCH_SET="everything")
    assert r.returncode == 2 and "BENCH_SET=everything" in r.stderr
    assert not table_rows(r.stdout)


def test_default_set_has_the_real_frames(tmp_path):
    real = Path(os.environ.get("AURP_SHARED_DATA", REPO / "tests" / "data" / "real"))
    names = sorted(p.stem for p in real.glob("*.fits"))
    r = bench_size(BENCH_SIM="aurora:1:1", BENCH_SPEED="0")
    assert r.returncode == 0, r.stderr
    rows = table_rows(r.stdout)
    assert sorted(rows) == sorted(names + ["sim_aurora_s1_l1"]), r.stdout

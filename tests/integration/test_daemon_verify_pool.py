"""The verify pool (issue #10 item 4): encoders hand each packed frame to
verify threads over all cores and take the next frame; a frame is
committed only after it verified, exactly once.  Real aurorad, real frames,
every outbox file unpacked with the real aurorapack."""
import os

import pytest

from daemon_harness import AURORAD, Daemon, check_outbox_exactly, move_in, simulate

pytestmark = pytest.mark.skipif(not AURORAD.exists(), reason=f"{AURORAD} not built")


def test_default_verify_pool_is_every_core_and_threads_are_bounded(daemon_factory):
    d = daemon_factory()
    d.start()
    started = d.events("started")[0]
    cores = os.cpu_count()
    assert started["verify_workers"] == cores
    # CPU only, auto: one encoder per core of one thread each, then the pool
    assert started["workers"] == cores
    assert started["threads"] == cores + cores
    assert started["max_in_flight"] == started["workers"] + started["verify_workers"]
    assert d.stop() == 0


def test_one_encoder_hands_a_backlog_to_the_pool(daemon_factory, tmp_path):
    d = daemon_factory(cpu_workers=1, cpu_threads=1, verify_workers=3)
    frames = simulate(tmp_path / "staging", 40, 64, 64, seed=11)
    originals = {p.name: p.read_bytes() for p in frames}
    move_in(frames, d.incoming)  # a start-up backlog
    d.start()
    started = d.events("started")[0]
    assert (started["workers"], started["verify_workers"], started["threads"]) == (1, 3, 4)
    assert started["max_in_flight"] == 4
    d.wait_outbox(originals, 120)
    assert d.stop() == 0
    check_outbox_exactly(d, originals, tmp_path / "unpacked")
    assert os.listdir(d.incoming) == []
    logged = d.events("frame")
    assert sorted(r["file"] for r in logged) == sorted(originals)
    for r in logged:
        assert r["verify_wait_ms"] >= 0 and r["verify_ms"] > 0
        assert r["latency_ms"] >= r["encode_ms"] + r["verify_ms"]


def test_verify_off_still_commits_through_the_pool(daemon_factory, tmp_path):
    d = daemon_factory(verify="false", verify_workers=1)
    frames = simulate(tmp_path / "staging", 10, 64, 64, seed=12)
    originals = {p.name: p.read_bytes() for p in frames}
    d.start()
    move_in(frames, d.incoming)
    d.wait_outbox(originals, 60)
    assert d.stop() == 0
    check_outbox_exactly(d, originals, tmp_path / "unpacked")
    assert all(r["verify_ms"] == 0 for r in d.events("frame"))


def test_verify_workers_out_of_range_is_refused(tmp_path):
    d = Daemon(tmp_path / "d", verify_workers=0)
    import subprocess
    p = subprocess.run([str(AURORAD), "--check-config", str(d.config_path)],
                       capture_output=True, text=True)
    assert p.returncode == 1
    assert "verify_workers" in p.stderr

"""aurorad moves frames from incoming to the outbox: bursts, a slow writer,
a start-up backlog, broken files.  Real aurorad, real aurorasim, real
directories; every output is unpacked with the real aurorapack."""
import os
import time

import pytest

from daemon_harness import (AURORAD, check_outbox_exactly, move_in, simulate,
                            wait_until)

pytestmark = pytest.mark.skipif(not AURORAD.exists(), reason=f"{AURORAD} not built")


def read_all(paths):
    return {p.name: p.read_bytes() for p in paths}


def test_burst_of_200_frames(daemon_factory, tmp_path):
    d = daemon_factory()
    frames = simulate(tmp_path / "staging", 200, 64, 64, seed=3)
    originals = read_all(frames)
    d.start()
    move_in(frames, d.incoming)
    d.wait_outbox(originals, 120)
    assert d.stop() == 0
    check_outbox_exactly(d, originals, tmp_path / "unpacked")
    assert os.listdir(d.incoming) == []
    assert sorted(os.listdir(d.done)) == sorted(originals)
    logged = d.events("frame")
    assert sorted(r["file"] for r in logged) == sorted(originals)
    for r in logged:
        for key in ("ts", "level", "file", "bytes_in", "bytes_out", "bpp", "latency_ms", "device",
                    "wait_ms", "encode_ms", "verify_ms", "write_ms"):
            assert key in r, f"frame log line without {key}: {r}"
        assert r["bytes_in"] == len(originals[r["file"]])
        assert r["bytes_out"] == (d.outbox / (r["file"] + ".aurp")).stat().st_size
        assert r["device"] == "cpu"
        assert r["latency_ms"] >= r["encode_ms"]


def test_slow_writer_is_taken_only_when_complete(daemon_factory, tmp_path):
    d = daemon_factory(settle_ms=300)
    d.start()
    writer = simulate_async_slow(d.incoming, seconds=3)
    t0 = time.monotonic()
    wait_until(lambda: d.events("frame"), 30, "the slowly written frame to be packed")
    writer.wait(10)
    assert writer.returncode == 0
    assert time.monotonic() - t0 >= 2.5, "taken before the writer finished"
    name = d.events("frame")[0]["file"]
    assert d.stop() == 0
    assert d.events("quarantined") == []
    original = {name: (d.done / name).read_bytes()}
    check_outbox_exactly(d, original, tmp_path / "unpacked")


def simulate_async_slow(incoming, seconds):
    import subprocess
    from daemon_harness import AURORASIM
    return subprocess.Popen([str(AURORASIM), "-W", "256", "-H", "256", "--count", "1",
                             "--interval", "0", "--write-mode", "slow", "--slow-seconds",
                             str(seconds), "--start-time", "2014-07-15T13:29:40", "-q",
                             str(incoming)])


def test_startup_backlog_drains_without_starving_new_frames(daemon_factory, tmp_path):
    # two CPU workers, one thread each: a backlog of 512 x 512 frames takes
    # several seconds, far longer than moving the new frames in
    d = daemon_factory(cpu_workers=2, cpu_threads=1)
    backlog = simulate(d.incoming, 40, 512, 512, seed=5, prefix="old_")
    old = time.time() - 3600  # written an hour ago, before the daemon started
    for p in backlog:
        os.utime(p, (old, old))
    originals = read_all(backlog)
    d.start()
    assert d.events("started")[0]["backlog_count"] == len(backlog)
    fresh = simulate(tmp_path / "staging", 4, 256, 256, seed=6, prefix="new_")
    originals.update(read_all(fresh))
    move_in(fresh, d.incoming, pause=0.1)
    d.wait_outbox(originals, 120)
    assert d.stop() == 0
    check_outbox_exactly(d, originals, tmp_path / "unpacked")
    order = [r["file"] for r in d.events("frame")]
    last_new = max(order.index(p.name) for p in fresh)
    last_old = max(order.index(p.name) for p in backlog)
    # every new frame was done while the backlog was still draining
    assert last_new < last_old, f"new frames waited for the backlog: {order}"
    assert all(r["backlog"] for r in d.events("frame") if r["file"].startswith("old_"))
    assert not any(r["backlog"] for r in d.events("frame") if r["file"].startswith("new_"))


def test_broken_files_are_quarantined_while_good_ones_flow(daemon_factory, tmp_path):
    d = daemon_factory(stall_seconds=1)
    d.start()
    good = simulate(tmp_path / "staging", 12, 64, 64, seed=7, prefix="good_")
    originals = read_all(good)
    broken = []
    for kind in ("truncated", "garbage", "bitpix32"):
        broken += simulate(tmp_path / "staging", 1, 64, 64, seed=8, prefix=f"{kind}_",
                           extra=["--broken", kind])
    (tmp_path / "staging" / "notes.txt").write_text("not a frame\n")
    broken.append(tmp_path / "staging" / "notes.txt")
    broken_bytes = read_all(broken)
    mixed = []
    for i, g in enumerate(good):
        mixed.append(g)
        if i % 3 == 0 and broken:
            mixed.append(broken.pop())
    mixed += broken
    move_in(mixed, d.incoming, pause=0.02)
    d.wait_outbox(originals, 60)
    wait_until(lambda: len(d.events("quarantined")) == len(broken_bytes), 30,
               "every broken file to be quarantined")
    assert d.stop() == 0
    check_outbox_exactly(d, originals, tmp_path / "unpacked")
    for name, data in broken_bytes.items():
        assert (d.quarantine / name).read_bytes() == data, f"{name} not kept intact in quarantine"
        reason = (d.quarantine / (name + ".reason")).read_text()
        assert reason.strip(), f"{name}: empty reason"
    reasons = {r["file"]: r["reason"] for r in d.events("quarantined")}
    assert set(reasons) == set(broken_bytes)
    assert "truncated" in reasons[next(n for n in reasons if n.startswith("truncated_"))]
    assert "FITS" in reasons["notes.txt"]
    assert os.listdir(d.incoming) == []


def test_originals_are_deleted_without_done_dir(daemon_factory, tmp_path):
    d = daemon_factory(done_dir=None)
    frames = simulate(tmp_path / "staging", 5, 64, 64, seed=9)
    originals = read_all(frames)
    d.start()
    move_in(frames, d.incoming)
    d.wait_outbox(originals, 30)
    wait_until(lambda: os.listdir(d.incoming) == [], 10, "incoming to empty")
    assert d.stop() == 0
    assert not d.done.exists()
    check_outbox_exactly(d, originals, tmp_path / "unpacked")


def test_missing_gpus_fall_back_to_the_cpu(daemon_factory, tmp_path):
    # this machine has no GPU (or the build has no CUDA): a warning, then the CPU
    d = daemon_factory(gpus=2, split="frames")
    d.start()
    warn = [r for r in d.records() if r["event"] in ("gpu_none", "gpu_missing")]
    if not warn:
        pytest.skip("a GPU is present here; the fallback is tested on machines without one")
    assert warn[0]["level"] == "warning" and warn[0]["reason"]
    frames = simulate(tmp_path / "staging", 3, 64, 64, seed=10)
    originals = read_all(frames)
    move_in(frames, d.incoming)
    d.wait_outbox(originals, 30)
    assert d.stop() == 0
    assert {r["device"] for r in d.events("frame")} == {"cpu"}
    check_outbox_exactly(d, originals, tmp_path / "unpacked")

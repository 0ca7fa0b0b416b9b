"""Retention of the originals on a small real file system (a tmpfs) that
fills up over simulated days of frames: originals in done_dir go oldest
first (by age, then to keep free space), never an unsent packed frame;
free space falling is logged."""
import os
import shutil
import subprocess
import time

import pytest

from daemon_harness import Daemon, simulate, wait_until

DAY = 86400


@pytest.fixture
def station_disk(tmp_path):
    mnt = tmp_path / "disk"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs for the retention test "
                    f"({r.stderr.decode().strip() or 'not permitted'})")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def free_bytes(path):
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def test_retention_over_simulated_days(station_disk, tmp_path):
    # incoming, outbox and done share the small disk, as on a station
    d = Daemon(station_disk, done_min_free="1536K", done_max_age_days=3.5,
               disk_warn_free="3M", disk_reserve="256K", state_dir=str(tmp_path / "state"),
               quarantine_dir=str(tmp_path / "quarantine"))
    d.start()
    now = time.time()
    delivered = {}   # name -> mtime (capture time)
    sent = set()
    for day in range(6):
        frames = simulate(tmp_path / f"day{day}", 16, 128, 128, seed=100 + day, prefix=f"d{day}_")
        for i, p in enumerate(frames):
            t = now - (5 - day) * DAY - (16 - i) * 60
            os.utime(p, (t, t))
            delivered[p.name] = t
            # the writer's way: a hidden name on the same disk, then rename
            shutil.copy2(p, d.incoming / ("." + p.name))
            os.rename(d.incoming / ("." + p.name), d.incoming / p.name)
        wait_until(lambda: not d.visible(d.incoming), 120, f"day {day} packed")
        packed = {n[:-len(".aurp")] for n in d.visible(d.outbox)}
        # no unsent packed frame is ever removed
        assert packed | sent == set(delivered), f"day {day}: packed frames lost"
        # the link works for all but the last two days: the sender removes what it sent
        for name in sorted(packed):
            if not name.startswith((f"d{day}_", f"d{day - 1}_")):
                (d.outbox / (name + ".aurp")).unlink()
                (d.outbox / (name[:-len(".fits")] + ".fits.sha256")).unlink(missing_ok=True)
                sent.add(name)
        # let retention run (every rescan_seconds = 1 s)
        time.sleep(2.5)
        kept = set(d.visible(d.done))
        removed = set(delivered) - kept
        # nothing in done is older than done_max_age_days
        assert all(now - delivered[n] <= 3.5 * DAY + 60 for n in kept), f"day {day}: too old kept"
        # oldest first: everything removed is older than everything kept
        if removed and kept:
            assert max(delivered[n] for n in removed) <= min(delivered[n] for n in kept)
    assert not d.events("outbox_fault"), "the spectrograph's disk filled up"
    assert free_bytes(station_disk) >= 256 * 1024
    events = d.events("retention")
    assert sum(e["by_age"] for e in events) >= 32, events   # days 0 and 1
    assert sum(e["by_free"] for e in events) > 0, events
    assert all(e["removed_bytes"] > 0 for e in events)
    low = d.events("disk_low")
    assert low and low[0]["key"] in ("incoming_dir", "outbox_dir", "done_dir"), low
    # every unsent frame is still in the outbox
    unsent = {n[:-len(".aurp")] for n in d.visible(d.outbox)}
    assert unsent == set(delivered) - sent
    assert d.stop() == 0
    assert "retention_removed " in (tmp_path / "state" / "counters").read_text()

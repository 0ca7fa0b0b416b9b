"""aurorad under faults: kill -9 at random moments, a full outbox file
system.  Exactly once, nothing lost, nothing partial visible."""
import os
import random
import shutil
import subprocess
import time

import pytest
from pathlib import Path

from daemon_harness import (AURORAD, AURORAPACK, Daemon, check_outbox_exactly, fill_filesystem,
                            move_in, simulate, wait_until)

pytestmark = pytest.mark.skipif(not AURORAD.exists(), reason=f"{AURORAD} not built")


@pytest.fixture
def daemon(tmp_path):
    made = []

    def make(**overrides):
        d = Daemon(tmp_path / "d", **overrides)
        made.append(d)
        return d

    yield make
    for d in made:
        d.cleanup()


def test_kill9_at_random_moments_then_restart_is_exactly_once(daemon, tmp_path):
    rng = random.Random(20140715)
    d = daemon()
    originals = {}
    for rnd in range(10):
        frames = simulate(tmp_path / "staging", 20, 128, 128, seed=100 + rnd, prefix=f"r{rnd:02d}_")
        originals.update({p.name: p.read_bytes() for p in frames})
        d.start()
        move_in(frames, d.incoming)
        time.sleep(rng.uniform(0.0, 0.6))
        d.kill9()
        # at the instant of the kill: every visible outbox file is complete,
        # and no original left incoming without its durable packed copy
        visible = d.visible(d.outbox)
        assert all(n.endswith(".aurp") for n in visible), visible
        for name in d.visible(d.done):
            assert name + ".aurp" in visible, f"round {rnd}: {name} released before its copy"
        for name in originals:
            assert (d.incoming / name).exists() or (d.done / name).exists(), \
                f"round {rnd}: {name} is neither in incoming nor in done"
        if visible:
            r = subprocess.run([str(AURORAPACK), "verify"] + [str(d.outbox / n) for n in visible],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)
            assert r.returncode == 0, f"round {rnd}: a visible outbox file does not verify: " \
                                      f"{r.stderr.decode()[-500:]}"
    d.start()
    d.wait_outbox(originals, 120)
    wait_until(lambda: os.listdir(d.incoming) == [], 30, "incoming to empty")
    assert d.stop() == 0
    check_outbox_exactly(d, originals, tmp_path / "unpacked")
    assert sorted(os.listdir(d.done)) == sorted(originals)
    assert not [n for n in os.listdir(d.outbox) if n.startswith(".")], "temporary files left"
    # a frame is logged once it is released, so at most once over all runs
    # (a kill between release and log loses only the line)
    finished = [r["file"] for r in d.records() if r["event"] in ("frame", "frame_recovered")]
    assert len(finished) == len(set(finished)), "a frame was finished twice"
    assert set(finished) <= set(originals)
    assert len(finished) >= len(originals) - 10


def can_mount_tmpfs(path):
    path.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(path)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return r.returncode == 0, r.stderr.decode().strip()


@pytest.fixture
def small_outbox(tmp_path):
    mnt = tmp_path / "d" / "outbox"
    ok, why = can_mount_tmpfs(mnt)
    if not ok:
        pytest.skip(f"cannot mount a tmpfs for the full-outbox test ({why or 'not permitted'})")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_full_outbox_keeps_originals_retries_and_recovers(daemon, small_outbox, tmp_path):
    notify_path = tmp_path / "notify.sock"
    from daemon_harness import NotifySocket
    ns = NotifySocket(notify_path)
    try:
        # fill the outbox file system to the last byte
        filler = fill_filesystem(small_outbox)
        d = daemon(retry_max_seconds=0.5)
        d.start(notify=ns)
        frames = simulate(tmp_path / "staging", 8, 128, 128, seed=31)
        originals = {p.name: p.read_bytes() for p in frames}
        move_in(frames, d.incoming)
        wait_until(lambda: d.events("outbox_fault"), 30, "an outbox fault to be logged")
        fault = d.events("outbox_fault")[0]
        assert fault["level"] == "error" and fault["errno"] == "ENOSPC"
        assert str(d.outbox) in fault["reason"]
        wait_until(lambda: any("OUTBOX FAULT" in m["STATUS"] for m in ns.with_key("STATUS")), 10,
                   "STATUS to show the fault")
        time.sleep(1.5)  # several retries while full: nothing may be lost meanwhile
        assert len(d.events("outbox_fault")) >= 2, "no retry with backoff"
        for name, data in originals.items():
            in_incoming = (d.incoming / name).exists()
            packed = (d.outbox / (name + ".aurp")).exists()
            assert in_incoming or packed, f"{name} lost while the outbox was full"
            if not packed:
                assert (d.incoming / name).read_bytes() == data
        assert not [n for n in os.listdir(d.outbox) if n.startswith(".")], "temporary file left"
        filler.unlink()  # the link took the queue away: space again
        d.wait_outbox(originals, 60)
        wait_until(lambda: d.events("outbox_recovered"), 10, "the recovery to be logged")
        assert d.stop() == 0
        leftover = [n for n in d.visible(d.outbox) if n != "filler.bin"]
        assert sorted(leftover) == sorted(n + ".aurp" for n in originals)
        check_outbox_exactly(d, originals, tmp_path / "unpacked")
    finally:
        ns.close()


def test_unreadable_frame_is_quarantined_and_does_not_hold_others_back(tmp_path):
    """A frame the daemon may not read (a writer's umask) cannot be helped by
    retrying: it goes to quarantine with the reason, the others flow.  Root
    reads everything, so as root the daemon runs as nobody (setpriv)."""
    import tempfile
    root = Path(tempfile.mkdtemp(prefix="aurorad-perm-"))
    d = None
    try:
        wrap, binary = (), None
        if os.geteuid() == 0:
            if not shutil.which("setpriv"):
                pytest.skip("running as root without setpriv: cannot drop privileges")
            os.chmod(root, 0o777)  # mkdtemp makes it 0700; nobody must reach it
            binary = root / "aurorad"  # the build tree may sit under a 0700 home
            shutil.copy2(AURORAD, binary)
            wrap = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")
        d = Daemon(root / "d")
        os.chmod(d.root, 0o777)
        os.chmod(d.incoming, 0o777)
        good = simulate(tmp_path / "staging", 6, 64, 64, seed=21, prefix="good_")
        originals = {p.name: p.read_bytes() for p in good}
        secret = simulate(tmp_path / "staging", 1, 64, 64, seed=22, prefix="secret_")[0]
        os.chmod(secret, 0o000)
        move_in([secret], d.incoming)
        d.start(wrap=wrap, binary=binary)
        move_in(good, d.incoming, pause=0.05)
        d.wait_outbox(originals, 60)
        wait_until(lambda: d.events("quarantined"), 30, "the unreadable frame to be quarantined")
        q = d.events("quarantined")
        assert [r["file"] for r in q] == [secret.name]
        assert "cannot be read" in q[0]["reason"] and "Permission denied" in q[0]["reason"]
        assert (d.quarantine / secret.name).exists()
        assert "cannot be read" in (d.quarantine / (secret.name + ".reason")).read_text()
        assert d.events("outbox_fault") == []
        assert d.stop() == 0
        check_outbox_exactly(d, originals, tmp_path / "unpacked")
    finally:
        if d is not None:
            d.cleanup()
        subprocess.run(["chmod", "-R", "u+rwx", str(root)], check=False)
        shutil.rmtree(root, ignore_errors=True)

"""scripts/aurora-send against a real rsync daemon on 127.0.0.1: capture
order, verification on arrival, removal of what was sent only, and a
transfer cut halfway (rsync killed) that the next run resumes."""
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from daemon_harness import Daemon, free_port, simulate, wait_until

REPO = Path(__file__).resolve().parents[2]
SENDER = REPO / "scripts" / "aurora-send"


@pytest.fixture
def rsyncd(tmp_path):
    if not shutil.which("rsync"):
        pytest.skip("rsync is not installed (scripts/install-deps.sh installs it)")
    remote = tmp_path / "remote"
    remote.mkdir()
    port = free_port()
    conf = tmp_path / "rsyncd.conf"
    conf.write_text(f"""port = {port}
address = 127.0.0.1
use chroot = false
pid file = {tmp_path}/rsyncd.pid
log file = {tmp_path}/rsyncd.log
[archive]
    path = {remote}
    read only = false
    transfer logging = yes
    uid = {os.getuid()}
    gid = {os.getgid()}
""")
    proc = subprocess.Popen(["rsync", "--daemon", "--no-detach", f"--config={conf}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def up():
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return True
        except OSError:
            return False
    wait_until(up, 10, "rsync --daemon to listen")
    yield f"rsync://127.0.0.1:{port}/archive/", remote
    proc.terminate()
    proc.wait(10)


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def send(outbox, dest, *opts, timeout=120):
    return subprocess.run([str(SENDER), *opts, str(outbox), dest], capture_output=True, text=True,
                          timeout=timeout)


def test_sends_daemon_outbox_in_capture_order_and_removes_sent(rsyncd, tmp_path):
    dest, remote = rsyncd
    d = Daemon(tmp_path / "d", outbox_names="capture")
    try:
        d.start()
        frames = simulate(tmp_path / "staging", 6, 64, 64, seed=21)
        for p in reversed(frames):  # committed in reverse capture order
            os.rename(p, d.incoming / p.name)
        wait_until(lambda: len([n for n in d.visible(d.outbox) if n.endswith(".aurp")]) == 6, 60,
                   "6 packed frames")
        names = sorted(n for n in d.visible(d.outbox) if n.endswith(".aurp"))
        digests = {n: sha256(d.outbox / n) for n in names}
        r = send(d.outbox, dest, "--batch", "1")
        assert r.returncode == 0, r.stderr
        assert not [n for n in os.listdir(d.outbox) if not n.startswith(".")], "sent files left"
        got = sorted(n for n in os.listdir(remote) if n.endswith(".aurp"))
        assert got == names
        assert {n: sha256(remote / n) for n in got} == digests
        # the receiver checks with the standard tool
        sidecars = sorted(n for n in os.listdir(remote) if n.endswith(".sha256"))
        assert len(sidecars) == 6
        assert subprocess.run(["sha256sum", "-c"] + sidecars, cwd=remote,
                              capture_output=True).returncode == 0
        # capture order: with --batch 1 each file arrives in its own run of
        # rsync, oldest capture first (mtime of arrival is not kept: -t keeps
        # the source's, so compare the rsync daemon's log order instead)
        log = (tmp_path / "rsyncd.log").read_text()
        order = [n for n in names]
        pos = [log.index(n) for n in order]
        assert pos == sorted(pos), "not sent in capture order"
    finally:
        d.cleanup()


def test_newest_first_and_a_corrupt_file_is_kept(rsyncd, tmp_path):
    dest, remote = rsyncd
    outbox = tmp_path / "outbox"
    outbox.mkdir()
    names = [f"20240101T00000{i}.000Z_f{i}.fits.aurp" for i in range(4)]
    for n in names:
        (outbox / n).write_bytes(os.urandom(5000))
        side = n[:-len(".aurp")] + ".sha256"
        (outbox / side).write_text(f"{sha256(outbox / n)}  {n}\n")
    # damage one after its sidecar was written: it must not leave
    with open(outbox / names[1], "r+b") as f:
        f.write(b"X")
    r = send(outbox, dest, "--newest-first", "--batch", "1")
    assert r.returncode == 1
    assert "does not match" in r.stderr
    left = sorted(n for n in os.listdir(outbox) if n.endswith(".aurp"))
    assert left == [names[1]]
    log = (tmp_path / "rsyncd.log").read_text()
    sent = [names[3], names[2], names[0]]
    pos = [log.index(n) for n in sent]
    assert pos == sorted(pos), "not newest first"


def test_transfer_cut_halfway_resumes_and_nothing_is_lost(rsyncd, tmp_path):
    dest, remote = rsyncd
    outbox = tmp_path / "outbox"
    outbox.mkdir()
    big = "20240101T000000.000Z_big.fits.aurp"
    data = os.urandom(24 << 20)
    (outbox / big).write_bytes(data)
    (outbox / "20240101T000000.000Z_big.fits.sha256").write_text(
        f"{hashlib.sha256(data).hexdigest()}  {big}\n")
    want = hashlib.sha256(data).hexdigest()
    # slow link: about 8 s for the file; cut it halfway by killing rsync
    proc = subprocess.Popen([str(SENDER), "--bwlimit", "3000", str(outbox), dest],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def rsync_child():
        r = subprocess.run(["pgrep", "-P", str(proc.pid), "-x", "rsync"], capture_output=True,
                           text=True)
        return r.stdout.split()[0] if r.stdout.split() else None

    def receiving():
        tmp = [p for p in remote.rglob("*big*")]
        return tmp and sum(p.stat().st_size for p in tmp) > (6 << 20)
    try:
        wait_until(receiving, 30, "the transfer to be under way")
        pid = rsync_child()
        assert pid, "no rsync child to cut"
        os.kill(int(pid), signal.SIGKILL)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode != 0
    # nothing removed before it arrived; nothing complete on the other side
    assert (outbox / big).read_bytes() == data
    assert not (remote / big).exists()
    time.sleep(0.5)
    partial = list((remote / ".rsync-partial").glob("*")) if (remote / ".rsync-partial").exists() else []
    assert partial and 0 < partial[0].stat().st_size < len(data), "no partial file kept to resume"
    # the next run resumes and completes
    r = send(outbox, dest)
    assert r.returncode == 0, r.stderr
    assert sha256(remote / big) == want
    assert not (outbox / big).exists(), "sent file not removed"
    assert subprocess.run(["sha256sum", "-c", "20240101T000000.000Z_big.fits.sha256"], cwd=remote,
                          capture_output=True).returncode == 0

"""aurorad against hostile files and careless writers (issue 9): no single
file may stall the queue, pack the wrong bytes or exhaust memory.  Real
aurorad, real files, real directories; a small tmpfs where a full disk is
needed (skipped, with the reason, where mount is not allowed)."""
import os
import random
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from daemon_harness import (AURORAD, AURORAPACK, Daemon, check_outbox_exactly, fill_filesystem,
                            move_in, simulate, unpack_all, wait_until)

pytestmark = pytest.mark.skipif(not AURORAD.exists(), reason=f"{AURORAD} not built")


def read_all(paths):
    return {Path(p).name: Path(p).read_bytes() for p in paths}


def mount_tmpfs(path, size="256k"):
    path.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs ({r.stderr.decode().strip() or 'not permitted'})")


def junk(path, text=b"this is not a FITS file\n"):
    Path(path).write_bytes(text)
    old = time.time() - 60
    os.utime(path, (old, old))
    return Path(path)


def name_of_length(n, suffix=".fits", fill_char="x"):
    return fill_char * (n - len(suffix)) + suffix


# ---- 1. head-of-line blocking ----------------------------------------------

def test_long_names_work_end_to_end_or_are_refused_once(daemon_factory, tmp_path):
    d = daemon_factory(rescan_seconds=0.3)
    staging = tmp_path / "staging"
    staging.mkdir()
    junk239 = junk(staging / name_of_length(239, ".dat"))   # the case
    junk248 = junk(staging / name_of_length(248, ".dat", "j"))  # the longest taken
    junk252 = junk(staging / name_of_length(252, ".dat", "k"))  # too long for NAME.reason
    long_frame = simulate(staging, 1, 64, 64, seed=40)[0]
    long_name = name_of_length(248, ".fits", "f")             # the longest name taken
    os.rename(long_frame, staging / long_name)
    good = simulate(staging / "good", 20, 64, 64, seed=41, prefix="good_")
    originals = read_all(good)
    originals[long_name] = (staging / long_name).read_bytes()
    d.start()
    move_in([junk239, junk248, junk252, staging / long_name], d.incoming)
    move_in(good, d.incoming)
    d.wait_outbox(originals, 60)
    wait_until(lambda: len(d.events("quarantined")) == 2, 20, "the two junk files quarantined")
    time.sleep(1.5)  # several rescans: the refusal must not be repeated
    refused = d.events("refused")
    assert [r["file"] for r in refused] == [junk252.name], refused
    assert "longer than 248" in refused[0]["reason"]
    assert (d.incoming / junk252.name).exists(), "a refused file stays where it is"
    for j in (junk239, junk248):
        assert (d.quarantine / j.name).exists()
        assert "not a valid FITS file" in (d.quarantine / (j.name + ".reason")).read_text()
    assert d.events("outbox_fault") == [] and d.events("file_fault") == []
    assert d.stop() == 0
    assert (d.done / long_name).read_bytes() == originals[long_name]
    # restored under a short name: aurorapack unpack's own temporary name
    # (.NAME.XXXXXX) does not fit beside a 248-byte NAME (a CLI matter)
    restored = tmp_path / "long_restored.fits"
    subprocess.run([str(AURORAPACK), "unpack", "-o", str(restored),
                    str(d.outbox / (long_name + ".aurp"))], check=True, timeout=60)
    assert restored.read_bytes() == originals.pop(long_name)
    have = set(d.visible(d.outbox)) - {long_name + ".aurp"}
    assert have == {n + ".aurp" for n in originals}
    restored_all = unpack_all([d.outbox / n for n in sorted(have)], tmp_path / "unpacked")
    assert restored_all == originals


def test_full_quarantine_backs_off_alone_and_good_frames_flow(daemon_factory, tmp_path):
    qdir = tmp_path / "d" / "quarantine"
    mount_tmpfs(qdir)
    try:
        filler = fill_filesystem(qdir)
        d = daemon_factory(rescan_seconds=0.5, retry_max_seconds=0.5)
        staging = tmp_path / "staging"
        staging.mkdir()
        bad = [junk(staging / f"bad{i}.txt") for i in range(3)]
        good = simulate(staging / "good", 20, 64, 64, seed=42, prefix="good_")
        originals = read_all(good)
        d.start()
        move_in(bad, d.incoming)
        move_in(good, d.incoming)
        d.wait_outbox(originals, 60)
        faults = d.events("file_fault")
        assert faults and all(f["errno"] == "ENOSPC" for f in faults), faults
        assert "cannot quarantine" in faults[0]["reason"]
        assert d.events("outbox_fault") == [], "a quarantine fault must not pause the outbox"
        for b in bad:
            assert (d.incoming / b.name).exists(), f"{b.name} lost while quarantine was full"
        filler.unlink()  # space again: the bad files go aside by themselves
        wait_until(lambda: len(d.events("quarantined")) == 3, 30, "the bad files quarantined")
        assert sorted(r["file"] for r in d.events("quarantined")) == sorted(b.name for b in bad)
        assert d.stop() == 0
        check_outbox_exactly(d, originals, tmp_path / "unpacked")
    finally:
        subprocess.run(["umount", "-l", str(qdir)], check=False)


def test_a_file_that_cannot_be_moved_aside_is_held_and_reported_once(tmp_path):
    """incoming is sticky (1777) and aurorad runs as nobody: a file owned by
    root cannot be renamed out of it (EPERM).  It stays, is reported once,
    and is looked at again only when it changes."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv to run aurorad as another user")
    root = Path(tempfile.mkdtemp(prefix="aurorad-held-"))
    d = None
    try:
        os.chmod(root, 0o777)
        binary = root / "aurorad"
        shutil.copy2(AURORAD, binary)
        d = Daemon(root / "d", rescan_seconds=0.3)
        os.chmod(d.root, 0o777)
        os.chmod(d.incoming, 0o1777)
        stuck = junk(tmp_path / "stuck.txt")  # root's, readable: not FITS -> quarantine -> EPERM
        good = simulate(tmp_path / "staging", 10, 64, 64, seed=43, prefix="good_")
        for g in good:
            os.chown(g, 65534, 65534)
        originals = read_all(good)
        move_in([stuck], d.incoming)
        d.start(wrap=("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"),
                binary=binary)
        move_in(good, d.incoming)
        d.wait_outbox(originals, 60)
        wait_until(lambda: d.events("held"), 20, "the stuck file to be reported")
        time.sleep(1.5)  # several rescans and retries would repeat it
        held = d.events("held")
        assert len(held) == 1, held
        assert held[0]["file"] == "stuck.txt" and held[0]["errno"] == "EPERM"
        assert (d.incoming / "stuck.txt").exists()
        assert not (d.quarantine / "stuck.txt.reason").exists(), "a note without its file"
        later = time.time()
        os.utime(d.incoming / "stuck.txt", (later, later))  # it changed: looked at again
        wait_until(lambda: len(d.events("held")) == 2, 20, "the changed file to be tried again")
        assert d.stop() == 0
        check_outbox_exactly(d, originals, tmp_path / "unpacked")
    finally:
        if d is not None:
            d.cleanup()
        shutil.rmtree(root, ignore_errors=True)


# ---- 2. what is released is what was packed ---------------------------------

def test_a_file_renamed_over_while_packed_is_never_released_as_packed(daemon_factory, tmp_path):
    """Each frame is replaced (renamed over) at a random moment while the
    daemon may be reading or packing it.  Whatever the timing: a released
    original is byte for byte what its outbox copy restores, and the new
    bytes are never lost (packed, quarantined or still waiting)."""
    rng = random.Random(9)
    d = daemon_factory(settle_ms=100)
    staging = tmp_path / "staging"
    first = simulate(staging / "a", 8, 1024, 512, seed=50, prefix="swap_")
    second = simulate(staging / "b", 8, 1024, 512, seed=51, prefix="swap_")
    replacement = {p.name: p.read_bytes() for p in second}
    d.start()
    for a, b in zip(first, second):
        move_in([a], d.incoming)
        time.sleep(rng.uniform(0.0, 0.3))
        os.rename(b, d.incoming / b.name)
    names = sorted(replacement)

    def settled():
        left = [n for n in names if (d.incoming / n).exists()]
        return not left
    wait_until(settled, 60, "every replaced frame to be handled")
    assert d.stop() == 0
    packed = unpack_all([d.outbox / (n + ".aurp") for n in names
                         if (d.outbox / (n + ".aurp")).exists()], tmp_path / "unpacked")
    for n in names:
        done = d.done / n
        if done.exists():
            assert n in packed, f"{n} released without a packed copy"
            assert done.read_bytes() == packed[n], f"{n}: released bytes are not what was packed"
        kept = [done.read_bytes()] if done.exists() else []
        kept += [p.read_bytes() for p in d.quarantine.glob(n + "*") if not p.name.endswith(".reason")]
        assert replacement[n] in kept, f"{n}: the replacing bytes were lost"


def fits_card(text):
    return text.ljust(80).encode("ascii")


def image_extension(width, height, seed):
    cards = ["XTENSION= 'IMAGE   '", "BITPIX  =                   16",
             "NAXIS   =                    2", f"NAXIS1  = {width:20d}", f"NAXIS2  = {height:20d}",
             "PCOUNT  =                    0", "GCOUNT  =                    1", "END"]
    header = b"".join(fits_card(c) for c in cards)
    header += b" " * (-len(header) % 2880)
    data = random.Random(seed).randbytes(width * height * 2)
    data += b"\0" * (-len(data) % 2880)
    return header + data


def test_a_two_hdu_file_written_in_place_with_a_pause_is_packed_whole(daemon_factory, tmp_path):
    """The writer writes the first HDU, pauses (longer than settle_ms), then
    appends the second, keeping the file open: the daemon must not release
    the first HDU alone."""
    d = daemon_factory(settle_ms=300, stall_seconds=30)
    primary = simulate(tmp_path / "staging", 1, 128, 64, seed=60)[0].read_bytes()
    ext = image_extension(96, 48, seed=61)
    d.start()
    name = "two_hdus.fits"
    with open(d.incoming / name, "wb") as f:
        f.write(primary)
        f.flush()
        os.fsync(f.fileno())
        time.sleep(2.0)
        f.write(ext)
    d.wait_outbox([name], 30)
    wait_until(lambda: (d.done / name).exists(), 10, "the release")
    assert d.stop() == 0
    assert d.events("quarantined") == []
    check_outbox_exactly(d, {name: primary + ext}, tmp_path / "unpacked")
    assert (d.done / name).read_bytes() == primary + ext


# ---- 3. only the regular file intake saw is opened --------------------------

def test_fifos_and_links_are_never_opened_or_followed(daemon_factory, tmp_path):
    rng = random.Random(3)
    d = daemon_factory(settle_ms=50, rescan_seconds=0.3)
    staging = tmp_path / "staging"
    target = simulate(staging / "target", 1, 64, 64, seed=70, prefix="target_")[0]
    target_bytes = target.read_bytes()
    os.mkfifo(d.incoming / "pipe.fits")
    os.symlink(target, d.incoming / "link.fits")
    frames = simulate(staging / "x", 24, 256, 256, seed=71, prefix="x_")
    originals = read_all(frames)
    d.start()
    # swap a FIFO or a link over each frame at a random moment after it arrived
    for i, f in enumerate(frames):
        move_in([f], d.incoming)
        time.sleep(rng.uniform(0.0, 0.15))
        tmp = staging / f".swap{i}"
        if i % 2:
            os.mkfifo(tmp)
        else:
            os.symlink(target, tmp)
        os.rename(tmp, d.incoming / f.name)
    late = simulate(staging / "late", 3, 64, 64, seed=72, prefix="late_")
    move_in(late, d.incoming)
    d.wait_outbox([p.name for p in late], 30)  # no worker is blocked
    t0 = time.monotonic()
    assert d.stop(timeout=20) == 0
    assert time.monotonic() - t0 < 15, "SIGTERM took too long: a worker was blocked"
    have = set(d.visible(d.outbox))
    assert "pipe.fits.aurp" not in have and "link.fits.aurp" not in have
    restored = unpack_all([d.outbox / n for n in sorted(have) if n.startswith("x_")],
                          tmp_path / "unpacked")
    for name, data in restored.items():
        assert data == originals[name], f"{name}: packed something else than the frame"
        assert data != target_bytes
    assert d.events("quarantined") == []


# ---- 4. directory aliases ---------------------------------------------------

def check_config(d):
    return subprocess.run([str(AURORAD), "--check-config", str(d.config_path)],
                          capture_output=True, text=True, timeout=30)


def test_directory_aliases_are_refused_everywhere(daemon_factory, tmp_path):
    d = daemon_factory()
    inc = str(d.incoming)
    os.symlink(d.incoming, tmp_path / "link_to_incoming")
    cases = [
        ({"outbox_dir": inc + "/."}, "same directory"),
        ({"outbox_dir": str(tmp_path / "d" / "x" / ".." / "incoming")}, "same directory"),
        ({"done_dir": inc + "/done"}, "inside"),
        ({"state_dir": str(tmp_path)}, "inside"),
        ({"outbox_dir": str(tmp_path / "link_to_incoming")}, "same directory"),
        ({"quarantine_dir": str(tmp_path / "link_to_incoming" / "q")}, "inside"),
    ]
    base = dict(d.settings)
    for change, want in cases:
        d.write_config(**{**base, **change})
        r = check_config(d)
        assert r.returncode == 1 and want in r.stderr, (change, r.stderr)
    # a bind mount is the same directory by device and inode only
    alias = tmp_path / "bind_of_incoming"
    alias.mkdir()
    if subprocess.run(["mount", "--bind", inc, str(alias)], stderr=subprocess.DEVNULL).returncode == 0:
        try:
            d.write_config(**{**base, "done_dir": str(alias)})
            r = check_config(d)
            assert r.returncode == 1 and "same directory" in r.stderr, r.stderr
        finally:
            subprocess.run(["umount", "-l", str(alias)], check=False)
    # at start: refused; on reload: refused, the running configuration kept
    d.write_config(**{**base, "outbox_dir": inc + "/."})
    d.start(wait_ready=False)
    assert d.proc.wait(20) == 1
    assert "same directory" in d.events("config_error")[0]["msg"]
    d.write_config(**base)
    d.start()
    d.write_config(**{**base, "done_dir": inc + "/sub"})
    d.signal(signal.SIGHUP)
    wait_until(lambda: d.events("reload_failed"), 10, "the reload to be refused")
    assert "inside" in d.events("reload_failed")[0]["error"]
    frames = simulate(tmp_path / "staging", 3, 64, 64, seed=80)
    originals = read_all(frames)
    move_in(frames, d.incoming)
    d.wait_outbox(originals, 30)
    assert d.stop() == 0
    assert not (d.incoming / "sub").exists()


# ---- 5. memory --------------------------------------------------------------

def peak_rss_kib(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def test_frames_over_max_frame_bytes_are_quarantined_before_reading(daemon_factory, tmp_path):
    d = daemon_factory(max_frame_bytes="1M")
    staging = tmp_path / "staging"
    small = simulate(staging / "s", 4, 64, 64, seed=90, prefix="small_")
    big = simulate(staging / "b", 1, 1024, 1024, seed=91, prefix="big_")[0]  # 2 MB
    huge = staging / "huge.fits"  # 4 GiB, sparse: reading it would take 4 GiB
    with open(huge, "wb") as f:
        f.write(big.read_bytes()[:2880])
        f.truncate(4 << 30)
    old = time.time() - 60
    os.utime(huge, (old, old))
    originals = read_all(small)
    d.start()
    move_in([big, huge], d.incoming)
    move_in(small, d.incoming)
    d.wait_outbox(originals, 30)
    wait_until(lambda: len(d.events("quarantined")) == 2, 30, "the two large files quarantined")
    for r in d.events("quarantined"):
        assert "too large" in r["reason"] and "max_frame_bytes" in r["reason"], r
    assert "too large" in (d.quarantine / "huge.fits.reason").read_text()
    assert peak_rss_kib(d.proc.pid) < 200 * 1024, "the daemon read a file over the limit"
    assert d.stop() == 0
    check_outbox_exactly(d, originals, tmp_path / "unpacked")
    d.write_config(max_frame_bytes="12Q")
    r = check_config(d)
    assert r.returncode == 1 and "max_frame_bytes" in r.stderr


# ---- 6. self-repair -----------------------------------------------------------

def test_deleted_directories_are_recreated_and_the_watch_rearmed(daemon_factory, tmp_path):
    d = daemon_factory(rescan_seconds=0.3, retry_max_seconds=0.5)
    d.start()
    for sub in (d.outbox, d.done, d.quarantine):
        shutil.rmtree(sub)
    frames = simulate(tmp_path / "staging", 5, 64, 64, seed=100, prefix="a_")
    originals = read_all(frames)
    move_in(frames, d.incoming)
    d.wait_outbox(originals, 30)
    recreated = {r["key"] for r in d.events("dir_recreated")}
    assert {"outbox_dir", "done_dir"} <= recreated, d.events("dir_recreated")
    wait_until(lambda: d.quarantine.is_dir(), 10, "quarantine recreated")
    # incoming deleted and made again: the watch follows it, with a log line
    shutil.rmtree(d.incoming)
    wait_until(lambda: d.events("incoming_missing"), 10, "incoming reported missing")
    time.sleep(1)
    assert len(d.events("incoming_missing")) == 1, "reported more than once"
    d.incoming.mkdir()
    wait_until(lambda: d.events("watch_rearmed"), 10, "the watch to be re-armed")
    more = simulate(tmp_path / "staging2", 3, 64, 64, seed=101, prefix="b_")
    originals.update(read_all(more))
    move_in(more, d.incoming)
    d.wait_outbox(originals, 30)
    assert d.stop() == 0
    check_outbox_exactly(d, originals, tmp_path / "unpacked")


def test_a_directory_whose_parent_is_gone_is_reported_once_and_frames_wait(daemon_factory, tmp_path):
    spool = tmp_path / "spool"
    d = daemon_factory(outbox_dir=str(spool / "outbox"), rescan_seconds=0.3, retry_max_seconds=0.3)
    d.outbox = spool / "outbox"
    d.start()
    shutil.rmtree(spool)  # an unmounted disk, say: not recreated on the root file system
    frames = simulate(tmp_path / "staging", 3, 64, 64, seed=110)
    originals = read_all(frames)
    move_in(frames, d.incoming)
    wait_until(lambda: d.events("dir_missing"), 10, "the missing outbox to be reported")
    time.sleep(1.5)
    missing = d.events("dir_missing")
    assert len(missing) == 1 and missing[0]["key"] == "outbox_dir", missing
    assert "mount it or create it" in missing[0]["action"]
    assert not spool.exists(), "created a directory whose parent was missing"
    for name in originals:
        assert (d.incoming / name).exists(), f"{name} lost while the outbox was missing"
    spool.mkdir()  # the operator mounts the disk again
    d.wait_outbox(originals, 30)
    assert d.stop() == 0
    check_outbox_exactly(d, originals, tmp_path / "unpacked")

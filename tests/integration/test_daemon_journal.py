"""The commit journal (issue #9: exactly once with a sender emptying the
outbox).  The states a kill -9 leaves are made on disk as the daemon would
leave them (STATE_DIR/committing/NAME.aurp naming the outbox's temporary
file and the original's identity), then the real aurorad starts on them."""
import os

import pytest

from daemon_harness import AURORAD, Daemon, check_outbox_exactly, simulate, wait_until

pytestmark = pytest.mark.skipif(not AURORAD.exists(), reason=f"{AURORAD} not built")


@pytest.fixture
def daemon(tmp_path):
    d = Daemon(tmp_path / "d")
    yield d
    d.cleanup()


def journal_entry(d, frame, tmp_name, ident=None):
    st = frame.stat()
    dev, ino, size, mtime = ident or (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    j = d.state / "committing"
    j.mkdir(parents=True, exist_ok=True)
    (j / (frame.name + ".aurp")).write_text(f"tmp {tmp_name}\nident {dev} {ino} {size} {mtime}\n")


def one_frame(d, tmp_path, seed):
    [src] = simulate(tmp_path / "staging", 1, 64, 64, seed=seed)
    frame = d.incoming / src.name
    os.rename(src, frame)
    return frame, frame.read_bytes()


def test_a_committed_frame_the_sender_took_is_released_not_packed_again(daemon, tmp_path):
    d = daemon
    frame, data = one_frame(d, tmp_path, 31)
    d.outbox.mkdir(parents=True, exist_ok=True)
    # killed after the rename into the outbox, before the release; the
    # sender has taken NAME.aurp since (the temporary file is gone: renamed)
    journal_entry(d, frame, ".tmp-1-j1")
    d.start()
    wait_until(lambda: (d.done / frame.name).exists(), 30, "the release")
    assert d.stop() == 0
    assert not any(n.endswith(".aurp") for n in os.listdir(d.outbox)), "packed a second time"
    assert (d.done / frame.name).read_bytes() == data
    [r] = d.events("frame_recovered")
    assert r["already_sent"] is True and r["file"] == frame.name
    assert os.listdir(d.state / "committing") == []
    assert "journal_resolved" in d.log_text()


def test_a_commit_that_never_renamed_is_packed_again(daemon, tmp_path):
    d = daemon
    frame, data = one_frame(d, tmp_path, 32)
    d.outbox.mkdir(parents=True, exist_ok=True)
    # killed between the journal entry and the rename: the temporary file is there
    (d.outbox / ".tmp-1-j1").write_bytes(b"half a packed frame")
    journal_entry(d, frame, ".tmp-1-j1")
    d.start()
    d.wait_outbox({frame.name: data}, 30)
    assert d.stop() == 0
    check_outbox_exactly(d, {frame.name: data}, tmp_path / "unpacked")
    assert not (d.outbox / ".tmp-1-j1").exists()
    assert [r["file"] for r in d.events("frame")] == [frame.name]
    assert os.listdir(d.state / "committing") == []


def test_an_entry_for_another_file_of_that_name_is_stale(daemon, tmp_path):
    d = daemon
    frame, data = one_frame(d, tmp_path, 33)
    st = frame.stat()
    journal_entry(d, frame, ".tmp-1-j1", (st.st_dev, st.st_ino + 1, st.st_size, st.st_mtime_ns))
    d.start()
    d.wait_outbox({frame.name: data}, 30)
    assert d.stop() == 0
    check_outbox_exactly(d, {frame.name: data}, tmp_path / "unpacked")
    assert os.listdir(d.state / "committing") == []


def test_every_commit_removes_its_entry(daemon, tmp_path):
    d = daemon
    frames = simulate(tmp_path / "staging", 12, 64, 64, seed=34)
    originals = {p.name: p.read_bytes() for p in frames}
    d.start()
    for p in frames:
        os.rename(p, d.incoming / p.name)
    d.wait_outbox(originals, 60)
    assert d.stop() == 0
    assert os.listdir(d.state / "committing") == []

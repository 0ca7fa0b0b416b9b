"""The transmission contract and the daemon's visibility: outbox names in
capture order under a burst, sha256 sidecars that `sha256sum -c` accepts,
the outbox group, `aurorad --queue`, counters that survive a restart, and
the metrics file scraped through a real prometheus-node-exporter."""
import grp
import os
import re
import shutil
import stat
import subprocess
import urllib.request

import pytest

from daemon_harness import AURORAD, Daemon, free_port, shuffled, simulate, unpack_all, wait_until

PREFIX = re.compile(r"^(\d{8}T\d{6}\.\d{3}Z)_(.+)\.aurp$")


@pytest.fixture
def daemon(tmp_path):
    made = []

    def make(**kw):
        kw.setdefault("outbox_names", "capture")
        d = Daemon(tmp_path / f"d{len(made)}", **kw)
        made.append(d)
        return d
    yield make
    for d in made:
        d.cleanup()


def aurp_names(d):
    return sorted(n for n in d.visible(d.outbox) if n.endswith(".aurp"))


def test_burst_outbox_sorts_in_capture_order_with_sidecars(daemon, tmp_path):
    d = daemon(metrics_file=str(tmp_path / "m" / "aurorad.prom"))
    (tmp_path / "m").mkdir()
    d.start()
    # frames captured 15 s apart, named so that name order is NOT capture order,
    # dropped in a shuffled order all at once
    frames = simulate(tmp_path / "staging", 12, 64, 64, seed=7, start_time="2014-07-15T23:59:00")
    renamed = []
    for i, p in enumerate(frames):
        q = p.with_name(f"z{(i * 7) % 12:02d}_{p.name}")
        p.rename(q)
        renamed.append(q)
    originals = {p.name: p.read_bytes() for p in renamed}
    capture_order = [p.name for p in renamed]  # aurorasim: index i at start + 15 s * i
    for p in shuffled(renamed, 3):
        os.rename(p, d.incoming / p.name)
    wait_until(lambda: len(aurp_names(d)) == 12, 60, "12 packed frames")
    names = aurp_names(d)
    got = [PREFIX.match(n).group(2) for n in names]
    assert got == capture_order, "outbox name order is not capture order"
    # the prefix is DATE-OBS of the header, crossing midnight
    assert PREFIX.match(names[0]).group(1) == "20140715T235900.000Z"
    assert PREFIX.match(names[-1]).group(1) == "20140716T000145.000Z"
    # every .aurp has NAME.sha256, and sha256sum -c accepts all of them
    sidecars = sorted(n for n in os.listdir(d.outbox) if n.endswith(".sha256"))
    assert [s[:-len(".sha256")] for s in sidecars] == [n[:-len(".aurp")] for n in names]
    r = subprocess.run(["sha256sum", "-c"] + sidecars, cwd=d.outbox, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    # a corrupted copy is caught by the standard tool
    broken = tmp_path / "broken"
    broken.mkdir()
    shutil.copy(d.outbox / names[0], broken)
    shutil.copy(d.outbox / sidecars[0], broken)
    with open(broken / names[0], "r+b") as f:
        f.seek(100)
        b = f.read(1)
        f.seek(100)
        f.write(bytes([b[0] ^ 1]))
    assert subprocess.run(["sha256sum", "-c", sidecars[0]], cwd=broken,
                          capture_output=True).returncode != 0
    # the packed frames restore the originals (under the prefixed name)
    restored = unpack_all([d.outbox / n for n in names], tmp_path / "unpacked")
    for n in names:
        plain = PREFIX.match(n).group(2)
        assert restored[n[:-len(".aurp")]] == originals[plain]
    # frame lines name the outbox file
    assert sorted(r["outbox_file"] for r in d.events("frame")) == names
    d.stop()


def test_outbox_group_may_read_and_remove(daemon, tmp_path):
    group = "nogroup"
    try:
        gid = grp.getgrnam(group).gr_gid
    except KeyError:
        pytest.skip("no group nogroup on this machine")
    d = daemon(outbox_group=group)
    d.start()
    st = os.stat(d.outbox)
    assert st.st_gid == gid and stat.S_IMODE(st.st_mode) == 0o2770
    frames = simulate(tmp_path / "staging", 1, 64, 64, seed=9)
    os.rename(frames[0], d.incoming / frames[0].name)
    wait_until(lambda: aurp_names(d), 30, "a packed frame")
    f = d.outbox / aurp_names(d)[0]
    fst = os.stat(f)
    assert fst.st_gid == gid and fst.st_mode & 0o040, "group cannot read the packed frame"
    d.stop()
    d.write_config(outbox_group="no_such_group_x")
    r = subprocess.run([str(AURORAD), "--check-config", str(d.config_path)], capture_output=True, text=True)
    assert r.returncode != 0 and "no_such_group_x" in r.stderr


def test_counters_survive_restart_and_queue_shows_them(daemon, tmp_path):
    d = daemon(budget_seconds=0.001)  # every frame over budget
    d.start()
    frames = simulate(tmp_path / "staging", 3, 64, 64, seed=11)
    for p in frames:
        os.rename(p, d.incoming / p.name)
    wait_until(lambda: len(aurp_names(d)) == 3, 30, "3 packed frames")
    (d.incoming / "junk.fits").write_bytes(b"not fits at all" * 300)
    wait_until(lambda: d.events("quarantined"), 30, "the junk to be quarantined")
    assert d.stop() == 0
    counters = (d.state / "counters").read_text()
    assert "committed 3\n" in counters and "quarantined 1\n" in counters
    assert "over_budget 3\n" in counters
    d.start()
    more = simulate(tmp_path / "staging2", 2, 64, 64, seed=12, prefix="b_")
    for p in more:
        os.rename(p, d.incoming / p.name)
    wait_until(lambda: len(aurp_names(d)) == 5, 30, "5 packed frames")
    # the running daemon saves its counters every rescan_seconds (1 s here)
    wait_until(lambda: "committed 5\n" in (d.state / "counters").read_text(), 10,
               "the counters to be saved")
    q = subprocess.run([str(AURORAD), "--queue", "-c", str(d.config_path)], capture_output=True,
                       text=True, timeout=30)
    assert q.returncode == 0, q.stderr
    out = q.stdout
    assert "running, pid" in out
    assert "5 unsent frames" in out
    assert "oldest waiting" in out
    assert "5 committed" in out and "1 quarantined" in out and "5 over budget" in out, out
    assert "devices:" in out and "cpu" in out
    assert d.stop() == 0
    assert "committed 5\n" in (d.state / "counters").read_text()
    q = subprocess.run([str(AURORAD), "--queue", "-c", str(d.config_path)], capture_output=True,
                       text=True, timeout=30)
    assert "NOT RUNNING" in q.stdout


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        return r.read().decode()


def test_metrics_through_node_exporter(daemon, tmp_path):
    exporter = shutil.which("prometheus-node-exporter") or "/usr/bin/prometheus-node-exporter"
    if not os.path.exists(exporter):
        pytest.skip("prometheus-node-exporter is not installed (scripts/install-deps.sh installs it)")
    mdir = tmp_path / "textfile"
    mdir.mkdir()
    d = daemon(metrics_file=str(mdir / "aurorad.prom"), gpus=1, budget_seconds=0.001)
    d.start()
    frames = simulate(tmp_path / "staging", 4, 64, 64, seed=13)
    for p in frames:
        os.rename(p, d.incoming / p.name)
    wait_until(lambda: len(aurp_names(d)) == 4, 60, "4 packed frames")
    port = free_port()
    proc = subprocess.Popen([exporter, f"--collector.textfile.directory={mdir}",
                             f"--web.listen-address=127.0.0.1:{port}", "--collector.disable-defaults",
                             "--collector.textfile"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def has_frames():
            try:
                text = scrape(port)
            except OSError:
                return None
            return text if 'aurorad_frames_total{outcome="committed"} 4' in text else None
        text = wait_until(has_frames, 30, "node_exporter to serve 4 committed frames")
        assert "aurorad_over_budget_total 4" in text
        assert re.search(r'aurorad_frame_latency_seconds_bucket\{le="\+Inf"\} 4', text)
        assert "aurorad_frame_latency_seconds_count 4" in text
        assert "aurorad_outbox_files 4" in text
        m = re.search(r"^aurorad_outbox_bytes (\d+)", text, re.M)
        assert int(m.group(1)) == sum((d.outbox / n).stat().st_size for n in aurp_names(d))
        assert re.search(r"^aurorad_outbox_oldest_age_seconds \d+", text, re.M)
        assert "aurorad_incoming_files 0" in text
        assert re.search(r'aurorad_disk_free_bytes\{dir="outbox"\} \d+', text)
        # gpus: 1 with the lsmix profile (CPU only) or no GPU here: the GPU is not up
        assert 'aurorad_gpu_up{device="gpu:0"} 0' in text
        # node_exporter read the file without complaint
        assert 'node_textfile_scrape_error 0' in text
        # sent (removed) frames leave the gauges
        for n in aurp_names(d):
            (d.outbox / n).unlink()
        wait_until(lambda: "aurorad_outbox_files 0" in scrape(port), 20, "the outbox gauge to fall")
    finally:
        proc.terminate()
        proc.wait(10)
    d.stop()

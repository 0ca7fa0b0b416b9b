"""aurorad as a systemd service: sd_notify messages on a real AF_UNIX
datagram socket, SIGHUP reload (valid and invalid), SIGTERM drain, the
watchdog, --check-config, journald-ready log lines, and `make install`
into a DESTDIR."""
import json
import os
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest

from daemon_harness import (AURORAD, Daemon, NotifySocket, check_outbox_exactly, move_in,
                            simulate, wait_until)

pytestmark = pytest.mark.skipif(not AURORAD.exists(), reason=f"{AURORAD} not built")


@pytest.fixture
def env(tmp_path):
    ns = NotifySocket(tmp_path / "notify.sock")
    made = []

    def make(**overrides):
        d = Daemon(tmp_path / "d", **overrides)
        made.append(d)
        return d

    yield make, ns
    for d in made:
        d.cleanup()
    ns.close()


def test_notify_ready_status_watchdog_stopping(env, tmp_path):
    make, ns = env
    d = make()
    d.start(notify=ns, env={"WATCHDOG_USEC": "400000"})
    wait_until(lambda: ns.with_key("READY", "1"), 10, "READY=1")
    frames = simulate(tmp_path / "staging", 6, 64, 64, seed=41)
    originals = {p.name: p.read_bytes() for p in frames}
    move_in(frames, d.incoming)
    d.wait_outbox(originals, 30)
    wait_until(lambda: any("6 frames done" in m["STATUS"] for m in ns.with_key("STATUS")), 10,
               "STATUS with 6 frames done")
    wait_until(lambda: len(ns.with_key("WATCHDOG", "1")) >= 3, 5, "WATCHDOG=1 pings")
    status = ns.with_key("STATUS")[-1]["STATUS"]
    for part in ("frames done", "backlog", "awaiting verify", "latency mean", "max", "bpp", "devices cpu"):
        assert part in status, f"STATUS lacks '{part}': {status}"
    assert d.stop() == 0
    assert ns.with_key("STOPPING", "1")
    # READY comes before any STOPPING
    msgs = ns.all()
    first_ready = next(i for i, m in enumerate(msgs) if m.get("READY") == "1")
    first_stop = next(i for i, m in enumerate(msgs) if m.get("STOPPING") == "1")
    assert first_ready < first_stop
    check_outbox_exactly(d, originals, tmp_path / "unpacked")


def test_no_watchdog_pings_without_watchdog_usec(env):
    make, ns = env
    d = make()
    d.start(notify=ns)
    wait_until(lambda: ns.with_key("READY", "1"), 10, "READY=1")
    time.sleep(0.5)
    assert d.stop() == 0
    assert not ns.with_key("WATCHDOG")


def test_sighup_reload_valid_then_invalid(env, tmp_path):
    make, ns = env
    d = make()
    d.start(notify=ns)
    wait_until(lambda: ns.with_key("READY", "1"), 10, "READY=1")
    before = simulate(tmp_path / "staging", 2, 64, 64, seed=51, prefix="a_")
    originals = {p.name: p.read_bytes() for p in before}
    move_in(before, d.incoming)
    d.wait_outbox(originals, 30)

    # a valid new file: new codec parameters and a new done directory
    new_done = tmp_path / "d" / "done2"
    d.write_config(codec="{profile: paper, order: 4, equations: 3, threshold: 5}", done_dir=str(new_done))
    d.signal(signal.SIGHUP)
    wait_until(lambda: d.events("reloaded"), 10, "the reload")
    wait_until(lambda: len(ns.with_key("READY", "1")) >= 2, 10, "READY=1 after the reload")
    assert ns.with_key("RELOADING", "1")
    rel = d.events("reloaded")[0]
    assert (rel["profile"], rel["order"], rel["equations"], rel["threshold"]) == ("paper", 4, 3, 5)
    after = simulate(tmp_path / "staging", 2, 64, 64, seed=52, prefix="b_")
    originals.update({p.name: p.read_bytes() for p in after})
    move_in(after, d.incoming)
    d.wait_outbox(originals, 30)
    # the original moves to done just after its packed copy is committed
    wait_until(lambda: new_done.exists() and sorted(os.listdir(new_done)) == sorted(p.name for p in after),
               10, "the originals in the new done directory")
    info = subprocess.run([str(AURORAD.parent / "aurorapack"), "info", "--json",
                           str(d.outbox / (after[0].name + ".aurp"))],
                          check=True, capture_output=True, text=True).stdout
    image = [c for c in json.loads(info)[0]["chunks"] if c["method"] == "image"][0]
    assert (image["N"], image["M"], image["T"]) == (4, 3, 5)

    # an invalid file: reported with file:line:column, the old one kept
    d.config_path.write_text(d.config_path.read_text() + "codec_typo: 3\n")
    n_ready = len(ns.with_key("READY", "1"))
    d.signal(signal.SIGHUP)
    wait_until(lambda: d.events("reload_failed"), 10, "the failed reload to be reported")
    err = d.events("reload_failed")[0]
    assert err["level"] == "error"
    lines = d.config_path.read_text().splitlines()
    assert f"{d.config_path}:{len(lines)}:1: unknown key 'codec_typo'" in err["error"]
    wait_until(lambda: len(ns.with_key("READY", "1")) > n_ready, 10, "READY=1 after the failure")
    assert any("reload failed" in m.get("STATUS", "") for m in ns.all())
    last = simulate(tmp_path / "staging", 2, 64, 64, seed=53, prefix="c_")
    originals.update({p.name: p.read_bytes() for p in last})
    move_in(last, d.incoming)
    d.wait_outbox(originals, 30)
    assert d.proc.poll() is None
    assert d.stop() == 0
    assert sorted(os.listdir(new_done)) == sorted(p.name for p in after + last)
    check_outbox_exactly(d, originals, tmp_path / "unpacked")


def test_sigterm_finishes_frames_in_flight_and_exits_0(env, tmp_path):
    make, ns = env
    # big frames, one thread: each takes a while, so some are in flight
    d = make(cpu_workers=2, cpu_threads=1)
    d.start(notify=ns)
    frames = simulate(tmp_path / "staging", 8, 512, 512, seed=61)
    originals = {p.name: p.read_bytes() for p in frames}
    move_in(frames, d.incoming)
    wait_until(lambda: d.events("frame"), 60, "the first frame")
    d.signal(signal.SIGTERM)
    rc = d.proc.wait(60)
    assert rc == 0
    stopping = d.events("stopping")[0]
    done_after_stop = [r for r in d.records()[d.records().index(stopping):] if r["event"] == "frame"]
    assert len(done_after_stop) == stopping["in_flight"], "frames in flight were not finished"
    assert ns.with_key("STOPPING", "1")
    assert d.events("stopped")
    # what was not started is still in incoming, intact; what was is packed
    packed = {n[:-5] for n in d.visible(d.outbox)}
    waiting = set(os.listdir(d.incoming))
    assert packed | waiting == set(originals) and not (packed & waiting)
    assert waiting, "the drain should not have taken every frame"
    for n in waiting:
        assert (d.incoming / n).read_bytes() == originals[n]
    # and the next start finishes them
    d.start(notify=ns)
    d.wait_outbox(originals, 120)
    assert d.stop() == 0
    check_outbox_exactly(d, originals, tmp_path / "unpacked")


def test_check_config(tmp_path):
    d = Daemon(tmp_path / "d")
    r = subprocess.run([str(AURORAD), "--check-config", str(d.config_path)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text(d.config_path.read_text().replace("gpus: 0", "gpus: many"))
    r = subprocess.run([str(AURORAD), "--check-config", str(bad)], capture_output=True, text=True)
    assert r.returncode != 0
    line = next(i + 1 for i, t in enumerate(bad.read_text().splitlines()) if t.startswith("gpus"))
    assert r.stderr.startswith(f"{bad}:{line}:7: gpus: 'many' is not an integer"), r.stderr
    r = subprocess.run([str(AURORAD), "--check-config", str(tmp_path / "missing.yaml")],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "missing.yaml: cannot open" in r.stderr


def test_log_lines_are_json_with_journal_prefix_when_asked(env, tmp_path):
    make, ns = env
    d = make(log_prefix="true")
    d.start(wait_ready=False)
    wait_until(lambda: "started" in d.log_text(), 10, "the start line")
    assert d.stop() == 0
    lines = d.log_text().splitlines()
    assert lines
    for line in lines:
        assert line.startswith("<"), line
        prio, rest = line[1:].split(">", 1)
        rec = json.loads(rest)  # what journald keeps after stripping the prefix
        assert int(prio) in range(0, 8)
        assert {"ts", "level", "event"} <= set(rec)


def test_second_daemon_on_the_same_state_dir_refuses(env):
    make, ns = env
    d = make()
    d.start()
    other = subprocess.run([str(AURORAD), "-c", str(d.config_path)], capture_output=True, text=True,
                           timeout=10)
    assert other.returncode != 0
    assert "another aurorad is running" in other.stderr
    assert d.stop() == 0


def _make_install(destdir, *extra):
    """`make -s install DESTDIR=destdir BUILD=<the tests' build dir>` from the
    repository root; returns the CompletedProcess."""
    repo = Path(__file__).resolve().parents[2]
    build = AURORAD.parent.parent
    try:  # the same spelling of BUILD as the build itself (make's targets are paths)
        build = build.resolve().relative_to(repo)
    except ValueError:
        pass
    r = subprocess.run(["make", "-s", "install", f"DESTDIR={destdir}", f"BUILD={build}", *extra],
                       cwd=repo, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"make install failed:\n{r.stdout}\n{r.stderr}"
    return r


def _yaml_dirs(config_text):
    dirs = {}
    for line in config_text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.endswith("_dir") and not key.startswith((" ", "#")):
            value = value.split("#", 1)[0].strip()
            if value:
                dirs[key] = value
    return dirs


def test_make_install_destdir(tmp_path):
    repo = Path(__file__).resolve().parents[2]
    dest = tmp_path / "root"
    _make_install(dest)

    binary = dest / "usr/local/bin/aurorad"
    unit = dest / "etc/systemd/system/aurorad.service"
    sysusers = dest / "usr/lib/sysusers.d/aurorad.conf"
    tmpfiles = dest / "usr/lib/tmpfiles.d/aurorad.conf"
    config = dest / "etc/aurorad/aurorad.yaml"
    doc = dest / "usr/local/share/doc/aurorapack/OPERATIONS.md"
    for path, mode in ((binary, 0o755), (unit, 0o644), (sysusers, 0o644), (tmpfiles, 0o644),
                       (config, 0o644), (doc, 0o644)):
        assert path.is_file(), f"{path} not installed"
        assert stat.S_IMODE(path.stat().st_mode) == mode, f"{path}: mode {path.stat().st_mode:o}"
    assert binary.read_bytes() == AURORAD.read_bytes()
    tool = dest / "usr/local/bin/aurorapack"  # to verify and unpack at the station too
    assert tool.is_file() and stat.S_IMODE(tool.stat().st_mode) == 0o755
    assert tool.read_bytes() == (AURORAD.parent / "aurorapack").read_bytes()
    assert sysusers.read_text() == (repo / "systemd/aurorad.sysusers").read_text()
    assert tmpfiles.read_text() == (repo / "systemd/aurorad.tmpfiles").read_text()
    assert config.read_text() == (repo / "config/aurorad.yaml").read_text()
    assert doc.read_text() == (repo / "docs/OPERATIONS.md").read_text()

    # the unit runs the installed binary on the installed configuration and
    # names the installed guide (paths as seen on the target, without DESTDIR)
    text = unit.read_text()
    assert "ExecStartPre=/usr/local/bin/aurorad --check-config /etc/aurorad/aurorad.yaml" in text
    assert "ExecStart=/usr/local/bin/aurorad -c /etc/aurorad/aurorad.yaml" in text
    assert "Documentation=file:///usr/local/share/doc/aurorapack/OPERATIONS.md" in text
    assert str(dest) not in text

    # the installed binary accepts the installed configuration
    r = subprocess.run([str(binary), "--check-config", str(config)], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"{config}: ok"
    assert subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                          timeout=30).stdout.startswith("aurorad ")

    # every directory of the configuration is made by tmpfiles and writable
    # under the unit's ProtectSystem=strict
    made = {line.split()[1] for line in tmpfiles.read_text().splitlines()
            if line.startswith("d ")}
    writable = [p for line in text.splitlines() if line.startswith("ReadWritePaths=")
                for p in line.split("=", 1)[1].split()]
    dirs = _yaml_dirs(config.read_text())
    assert {"incoming_dir", "outbox_dir", "quarantine_dir", "state_dir"} <= set(dirs)
    for key, d in dirs.items():
        assert d in made, f"{key} {d} is not created by {tmpfiles.name}"
        assert any(d == w or d.startswith(w.rstrip("/") + "/") for w in writable), \
            f"{key} {d} is not under ReadWritePaths {writable}"


def test_make_install_prefix_and_keeps_an_edited_config(tmp_path):
    dest = tmp_path / "root"
    _make_install(dest)
    config = dest / "etc/aurorad/aurorad.yaml"
    edited = config.read_text().replace("budget_seconds: 15", "budget_seconds: 20")
    assert edited != config.read_text()
    config.write_text(edited)

    r = _make_install(dest, "PREFIX=/opt/aurorapack")
    assert "keeping the existing" in r.stdout
    assert config.read_text() == edited, "make install replaced an existing configuration"
    binary = dest / "opt/aurorapack/bin/aurorad"
    assert binary.is_file() and os.access(binary, os.X_OK)
    assert (dest / "opt/aurorapack/share/doc/aurorapack/OPERATIONS.md").is_file()
    text = (dest / "etc/systemd/system/aurorad.service").read_text()
    assert "ExecStart=/opt/aurorapack/bin/aurorad -c /etc/aurorad/aurorad.yaml" in text
    assert "ExecStartPre=/opt/aurorapack/bin/aurorad --check-config" in text
    assert "Documentation=file:///opt/aurorapack/share/doc/aurorapack/OPERATIONS.md" in text
    assert "/usr/local" not in text
    r = subprocess.run([str(binary), "--check-config", str(config)], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 0, r.stderr

"""aurorad for people (issue #10 item 5): readable log lines on a terminal
and JSON otherwise (or as forced), one type per field name, --check-config
reporting every error and explaining tabs, and the demo (real-clock names,
a restore, a clean start).  Real aurorad, real terminals (pty), real files."""
import json
import os
import pty
import re
import signal
import subprocess
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from daemon_harness import AURORAD, Daemon, move_in, simulate, wait_until

pytestmark = pytest.mark.skipif(not AURORAD.exists(), reason=f"{AURORAD} not built")
ROOT = Path(__file__).resolve().parents[2]
TEXT_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}Z (info|notice|warning|error)\s+\w+")


def run_on_terminal(d, extra=()):
    """Runs aurorad with stderr on a pty until it has started; returns its lines."""
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("JOURNAL_STREAM", "NOTIFY_SOCKET")}
    p = subprocess.Popen([str(AURORAD), *extra, "-c", str(d.config_path)], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=slave, env=env)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + 20
    while b"started" not in out and time.monotonic() < deadline:
        try:
            out += os.read(master, 65536)
        except OSError:
            break
    p.send_signal(signal.SIGTERM)
    assert p.wait(30) == 0
    try:
        while True:
            chunk = os.read(master, 65536)
            if not chunk:
                break
            out += chunk
    except OSError:
        pass
    os.close(master)
    return [l for l in out.decode().replace("\r", "").splitlines() if l.strip()]


def test_log_lines_are_readable_on_a_terminal(tmp_path):
    d = Daemon(tmp_path / "d", log_prefix="auto")
    d.settings.pop("log_format", None)
    d.write_config()
    lines = run_on_terminal(d)
    started = [l for l in lines if " started " in l]
    assert started, lines
    assert TEXT_LINE.match(started[0]), started[0]
    assert "verify_workers=" in started[0] and "devices=\"cpu x" in started[0]
    assert not any(l.lstrip().startswith("{") for l in lines), lines


def test_log_format_json_can_be_forced_on_a_terminal(tmp_path):
    d = Daemon(tmp_path / "d")
    lines = run_on_terminal(d, extra=("--log-format", "json"))
    assert [json.loads(l)["event"] for l in lines][-1] == "stopped"


def test_log_format_text_can_be_forced_into_a_file(tmp_path):
    d = Daemon(tmp_path / "d", log_format="text")
    d.start(wait_ready=False)
    wait_until(lambda: " started " in d.log_text(), 20, "the started line")
    assert d.stop() == 0
    assert all(TEXT_LINE.match(l) for l in d.log_text().splitlines()), d.log_text()


def test_one_type_per_field_name(tmp_path):
    """over_budget and backlog are booleans of frame lines; the counts of the
    status and started lines have their own names."""
    d = Daemon(tmp_path / "d", budget_seconds=0.001)
    frames = simulate(tmp_path / "staging", 4, 64, 64, seed=21)
    move_in(frames[:2], d.incoming)  # a backlog
    d.start()
    move_in(frames[2:], d.incoming)
    d.wait_outbox({p.name for p in frames}, 60)
    assert d.stop() == 0
    kinds = {}
    for r in d.records():
        for k, v in r.items():
            t = "bool" if isinstance(v, bool) else "number" if isinstance(v, (int, float)) \
                else "null" if v is None else type(v).__name__
            kinds.setdefault(k, set()).add(t)
    mixed = {k: v for k, v in kinds.items() if len(v - {"null"}) > 1}
    assert not mixed, mixed
    frames_logged = d.events("frame")
    assert all(r["over_budget"] is True for r in frames_logged)
    assert {r["backlog"] for r in frames_logged} == {True, False}
    assert isinstance(d.events("started")[0]["backlog_count"], int)


def check_config(path):
    return subprocess.run([str(AURORAD), "--check-config", str(path)], capture_output=True, text=True)


def test_check_config_reports_every_error(tmp_path):
    d = Daemon(tmp_path / "d", gpus="four", split="rows", verify_workers=0, colour="blue",
               done_dir="relative/done")
    r = check_config(d.config_path)
    assert r.returncode == 1
    lines = r.stderr.splitlines()
    for want in ("gpus: 'four' is not an integer", "split: expected 'columns' or 'frames'",
                 "verify_workers: 0 is outside 1..1024", "unknown key 'colour'",
                 "done_dir: 'relative/done' is not an absolute path"):
        assert sum(want in l for l in lines) == 1, (want, r.stderr)
    assert lines[-1] == f"{d.config_path}: 5 errors"
    assert not any("missing required key" in l for l in lines)


def test_check_config_explains_tabs(tmp_path):
    d = Daemon(tmp_path / "d")
    text = d.config_path.read_text() + "codec:\n\torder: 11\n"
    d.config_path.write_text(text)
    line = text.count("\n")  # the tab line is the last
    r = check_config(d.config_path)
    assert r.returncode == 1
    assert f"YAML forbids tabs for indentation: line {line} col 1" in r.stderr, r.stderr
    assert "cannot start any token" not in r.stderr


def test_demo_names_by_the_clock_restores_and_starts_clean(tmp_path):
    build = Path(os.environ.get("AURP_BUILD", ROOT / "build"))
    demo = tmp_path / "demo"
    env = dict(os.environ, BUILD=os.path.relpath(build, ROOT), DEMO_DIR=str(demo),
               DEMO_INTERVAL="1", DEMO_FRAMES="2", DEMO_WIDTH="128", DEMO_HEIGHT="128")
    env.pop("JOURNAL_STREAM", None)
    for run in range(2):
        t0 = datetime.now(timezone.utc).replace(microsecond=0)
        p = subprocess.run([str(ROOT / "scripts/demo.sh")], cwd=ROOT, env=env, capture_output=True,
                           text=True, timeout=120)
        assert p.returncode == 0, p.stdout + p.stderr
        assert "== restore: ok" in p.stdout, p.stdout
        assert "is byte for byte the original" in p.stdout
        packed = sorted(n for n in os.listdir(demo / "outbox") if n.endswith(".aurp"))
        assert len(packed) == 2, packed  # the earlier run's frames are gone
        for name in packed:
            t = datetime.strptime(name[:15], "%Y%m%dT%H%M%S").replace(tzinfo=timezone.utc)
            assert abs((t - t0).total_seconds()) < 30, (name, t0)
        assert (demo / "state" / "aurorad.prom").exists()

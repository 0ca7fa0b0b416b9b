"""Helpers for the aurorad integration tests: real processes, real
directories, a real AF_UNIX datagram socket as NOTIFY_SOCKET.

Everything a test starts is stopped by the fixtures, even when the test
fails: daemons are killed, mounts unmounted.
"""
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

BUILD = Path(os.environ.get("AURP_BUILD", Path(__file__).resolve().parents[2] / "build"))
BIN = BUILD / "bin"
AURORAD = BIN / "aurorad"
AURORASIM = BIN / "aurorasim"
AURORAPACK = BIN / "aurorapack"


def wait_until(pred, timeout, what, interval=0.05):
    """Polls pred() until it is true; fails naming what it waited for."""
    end = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def simulate(outdir, count, width=64, height=64, seed=1, prefix="", start_time="2014-07-15T13:29:40",
             extra=()):
    """Writes count simulated frames into outdir with the real aurorasim;
    returns their paths, sorted."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    before = set(os.listdir(outdir))
    cmd = [str(AURORASIM), "-W", str(width), "-H", str(height), "--seed", str(seed),
           "--count", str(count), "--interval", "0", "--start-time", start_time, "-q"]
    if prefix:
        cmd += ["--prefix", prefix]
    cmd += list(extra) + [str(outdir)]
    subprocess.run(cmd, check=True, timeout=120)
    return sorted(outdir / n for n in set(os.listdir(outdir)) - before)


def fill_filesystem(fs_dir):
    """Fills the file system of fs_dir to the last byte; returns the filler."""
    filler = Path(fs_dir) / "filler.bin"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        while True:
            os.write(fd, b"\0" * 1024)
    except OSError:
        pass
    finally:
        os.close(fd)
    return filler


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def move_in(paths, incoming, pause=0.0):
    """Moves files into incoming by rename (how a careful writer delivers)."""
    for p in paths:
        os.rename(p, Path(incoming) / Path(p).name)
        if pause:
            time.sleep(pause)


def unpack_all(aurp_paths, workdir):
    """Unpacks every .aurp with the real CLI; returns {original name: bytes}."""
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    out = {}
    for chunk_start in range(0, len(aurp_paths), 100):
        chunk = aurp_paths[chunk_start:chunk_start + 100]
        copies = []
        for p in chunk:
            c = workdir / Path(p).name
            shutil.copyfile(p, c)
            copies.append(str(c))
        subprocess.run([str(AURORAPACK), "unpack", "-f"] + copies, check=True, timeout=300,
                       stdout=subprocess.DEVNULL)
        for c in copies:
            name = Path(c).name[: -len(".aurp")]
            out[name] = (workdir / name).read_bytes()
    return out


class NotifySocket:
    """A real AF_UNIX datagram socket, as systemd offers NOTIFY_SOCKET."""

    def __init__(self, path):
        self.path = str(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.settimeout(0.2)
        self.messages = []  # list of dicts, one per datagram
        self._lock = threading.Lock()
        self._stop = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop:
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            fields = {}
            for line in data.decode("utf-8", "replace").split("\n"):
                if "=" in line:
                    k, v = line.split("=", 1)
                    fields[k] = v
            with self._lock:
                self.messages.append(fields)

    def all(self):
        with self._lock:
            return list(self.messages)

    def with_key(self, key, value=None):
        return [m for m in self.all() if key in m and (value is None or m[key] == value)]

    def close(self):
        self._stop = True
        self._thread.join(2)
        self.sock.close()


class Daemon:
    """One aurorad with its own directories under root."""

    def __init__(self, root, **overrides):
        self.root = Path(root)
        self.incoming = self.root / "incoming"
        self.outbox = self.root / "outbox"
        self.done = self.root / "done"
        self.quarantine = self.root / "quarantine"
        self.state = self.root / "state"
        self.config_path = self.root / "aurorad.yaml"
        self.log_path = self.root / "aurorad.log"
        self.settings = {
            "incoming_dir": str(self.incoming),
            "outbox_dir": str(self.outbox),
            "done_dir": str(self.done),
            "quarantine_dir": str(self.quarantine),
            "state_dir": str(self.state),
            "codec": "{order: 11, equations: 7, threshold: 13}",
            "gpus": 0,
            "split": "columns",
            "budget_seconds": 15,
            "verify": "true",
            "settle_ms": 150,
            "stall_seconds": 2,
            "rescan_seconds": 1,
            "retry_max_seconds": 1,
            "log_prefix": "false",
            # the tests written before the capture-time names look for NAME.aurp;
            # test_daemon_contract.py tests the default (capture) names
            "outbox_names": "plain",
        }
        self.settings.update(overrides)
        self.proc = None
        self.log_file = None
        self.incoming.mkdir(parents=True, exist_ok=True)
        self.write_config()

    def write_config(self, path=None, **changes):
        self.settings.update(changes)
        text = "".join(f"{k}: {v}\n" for k, v in self.settings.items() if v is not None)
        Path(path or self.config_path).write_text(text)

    def start(self, notify=None, env=None, wait_ready=True, wrap=(), binary=None):
        """wrap: a command to run aurorad under (e.g. setpriv to drop root);
        binary: another copy of aurorad to run."""
        e = dict(os.environ)
        e.pop("NOTIFY_SOCKET", None)
        e.pop("WATCHDOG_USEC", None)
        e.pop("WATCHDOG_PID", None)
        e.pop("JOURNAL_STREAM", None)
        if notify is not None:
            e["NOTIFY_SOCKET"] = notify.path
        if env:
            e.update(env)
        started_before = len(self.events("started"))
        self.log_file = open(self.log_path, "ab")
        self.proc = subprocess.Popen(list(wrap) + [str(binary or AURORAD), "-c", str(self.config_path)],
                                     stdout=subprocess.DEVNULL, stderr=self.log_file, env=e)
        if wait_ready:
            wait_until(lambda: len(self.events("started")) > started_before
                       or self.proc.poll() is not None, 20,
                       "aurorad to start")
            assert self.proc.poll() is None, f"aurorad exited at start:\n{self.log_text()}"
        return self

    def log_text(self):
        try:
            return self.log_path.read_text()
        except FileNotFoundError:
            return ""

    def records(self):
        """Every log line as a dict (each line must be one JSON object)."""
        out = []
        for line in self.log_text().splitlines():
            if not line.strip():
                continue
            out.append(json.loads(line))
        return out

    def events(self, name=None):
        return [r for r in self.records() if name is None or r["event"] == name]

    def signal(self, sig):
        self.proc.send_signal(sig)

    def stop(self, timeout=60):
        """SIGTERM and wait; returns the exit status."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout)
        finally:
            self._close()
        return rc

    def kill9(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
        self._close()

    def _close(self):
        if self.log_file:
            self.log_file.close()
            self.log_file = None

    def visible(self, d):
        """Names in a directory, without hidden (temporary) files, and
        without the outbox's NAME.sha256 checksum sidecars."""
        try:
            return sorted(n for n in os.listdir(d) if not n.startswith(".")
                          and not (Path(d) == self.outbox and n.endswith(".sha256")))
        except FileNotFoundError:
            return []

    def wait_outbox(self, names, timeout):
        want = sorted(n + ".aurp" for n in names)
        return wait_until(lambda: sorted(set(self.visible(self.outbox)) & set(want)) == want,
                          timeout, f"{len(want)} files in the outbox (have "
                          f"{len(self.visible(self.outbox))})")

    def cleanup(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self._close()


def check_outbox_exactly(daemon, originals, workdir):
    """The outbox holds exactly one NAME.aurp per original, each restoring
    the original byte for byte; nothing else is visible there."""
    want = sorted(n + ".aurp" for n in originals)
    have = daemon.visible(daemon.outbox)
    assert have == want, f"outbox: missing {sorted(set(want) - set(have))[:5]}, " \
                         f"extra {sorted(set(have) - set(want))[:5]}"
    restored = unpack_all([daemon.outbox / n for n in have], workdir)
    for name, data in originals.items():
        assert restored[name] == data, f"{name}: unpacked bytes differ from the original"


def shuffled(seq, seed):
    s = list(seq)
    random.Random(seed).shuffle(s)
    return s

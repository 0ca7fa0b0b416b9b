#!/usr/bin/env python3
"""Soak test of aurorad: several hundred rounds of kill -9 while frames
arrive and a sender empties the outbox, as the link does at a station.

Each round starts the real aurorad, moves a few frames (and now and then a
broken file) into incoming, and kills the daemon with SIGKILL at a random
moment.  A sender thread moves every visible NAME.aurp out of the outbox
the moment it appears, keeping every copy it ever took.  At the end aurorad
runs until incoming and the outbox are empty, then every copy sent is
unpacked with the real aurorapack and compared with its original.

Prints: frames in, packed exactly once, duplicated (sent more than once,
every copy correct), quarantined, lost, wrong (a copy that does not restore
its original).  Exit status 0 when nothing is lost or wrong.

    scripts/soak-daemon.py [--rounds 300] [--frames 3] [--build build] [--keep]
"""
import argparse
import collections
import hashlib
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CAPTURE_PREFIX = re.compile(r"^\d{8}T\d{6}\.\d{3}Z_")


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--frames", type=int, default=3, help="frames moved in per round")
    ap.add_argument("--size", type=int, default=64, help="frame width and height")
    ap.add_argument("--max-kill-delay", type=float, default=0.4, help="seconds")
    ap.add_argument("--build", default=os.environ.get("AURP_BUILD", str(REPO / "build")))
    ap.add_argument("--seed", type=int, default=9)
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    return ap.parse_args()


class Sender(threading.Thread):
    """Takes every visible .aurp out of the outbox, keeping each copy."""

    def __init__(self, outbox, sent):
        super().__init__(daemon=True)
        self.outbox, self.sent = outbox, sent
        self.copies = collections.defaultdict(list)  # frame name -> [path of each copy]
        self.stop = False
        self.serial = 0
        self.bad_sidecars = 0  # a copy without its sidecar, or not matching it

    def sweep(self):
        try:
            names = os.listdir(self.outbox)
        except FileNotFoundError:
            return
        for n in names:
            if n.startswith(".") or not n.endswith(".aurp"):
                continue
            self.serial += 1
            dst = self.sent / str(self.serial)
            dst.mkdir()
            try:
                os.rename(self.outbox / n, dst / n)
            except FileNotFoundError:
                dst.rmdir()
                continue
            stem = n[:-len(".aurp")]
            self.copies[stem].append(dst / n)
            # the contract's sidecar (NAME.sha256, written before NAME.aurp)
            # goes with it, checked as a receiver would with sha256sum -c
            sidecar = self.outbox / (stem + ".sha256")
            try:
                want = sidecar.read_text().split()[0]
                sidecar.unlink()
            except (FileNotFoundError, IndexError):
                self.bad_sidecars += 1
                continue
            if hashlib.sha256((dst / n).read_bytes()).hexdigest() != want:
                self.bad_sidecars += 1

    def run(self):
        while not self.stop:
            self.sweep()
            time.sleep(0.02)
        self.sweep()


def write_config(root):
    cfg = root / "aurorad.yaml"
    cfg.write_text("".join(f"{k}: {v}\n" for k, v in {
        "incoming_dir": root / "incoming", "outbox_dir": root / "outbox",
        "done_dir": root / "done", "quarantine_dir": root / "quarantine",
        "state_dir": root / "state", "cpu_workers": 2, "settle_ms": 50,
        "stall_seconds": 2, "rescan_seconds": 0.5, "retry_max_seconds": 0.5,
        "log_prefix": "false"}.items()))
    return cfg


def start(aurorad, cfg, log):
    return subprocess.Popen([str(aurorad), "-c", str(cfg)], stdout=subprocess.DEVNULL,
                            stderr=log)


def restore_all(aurorapack, copies, workdir):
    """{frame name: [restored bytes of each copy]} through aurorapack unpack."""
    restored = collections.defaultdict(list)
    paths = [(name, p) for name, ps in copies.items() for p in ps]
    for i in range(0, len(paths), 200):
        chunk = paths[i:i + 200]
        subprocess.run([str(aurorapack), "unpack", "-f"] + [str(p) for _, p in chunk],
                       check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=600)
        for name, p in chunk:
            out = p.parent / name
            # the outbox name is CAPTURETIME_NAME (outbox_names: capture)
            restored[CAPTURE_PREFIX.sub("", name)].append(out.read_bytes() if out.exists() else None)
    return restored


def main():
    a = parse_args()
    build = Path(a.build).resolve()
    aurorad, aurorasim, aurorapack = (build / "bin" / n for n in ("aurorad", "aurorasim", "aurorapack"))
    for p in (aurorad, aurorasim, aurorapack):
        if not p.exists():
            sys.exit(f"{p} is not built (make BUILD={build})")
    rng = random.Random(a.seed)
    root = Path(tempfile.mkdtemp(prefix="aurorad-soak-"))
    for d in ("incoming", "staging", "sent"):
        (root / d).mkdir()
    cfg = write_config(root)
    total = a.rounds * a.frames
    print(f"soak: {a.rounds} rounds x {a.frames} frames in {root}", flush=True)
    subprocess.run([str(aurorasim), "-W", str(a.size), "-H", str(a.size), "--count", str(total),
                    "--interval", "0", "--start-time", "2014-07-15T00:00:00", "-q",
                    "--seed", str(a.seed), str(root / "staging")], check=True, timeout=600)
    staged = sorted((root / "staging").iterdir())
    originals = {p.name: p.read_bytes() for p in staged}
    broken = set()
    sender = Sender(root / "outbox", root / "sent")
    sender.start()
    log = open(root / "aurorad.log", "ab")
    t0 = time.monotonic()
    for rnd in range(a.rounds):
        proc = start(aurorad, cfg, log)
        batch = staged[rnd * a.frames:(rnd + 1) * a.frames]
        for p in batch:
            os.rename(p, root / "incoming" / p.name)
        if rnd % 25 == 7:  # now and then a file that must go to quarantine
            name = f"broken_{rnd:04d}.fits"
            (root / "incoming" / name).write_bytes(b"SIMPLE  = garbage\n")
            broken.add(name)
        time.sleep(rng.uniform(0.0, a.max_kill_delay))
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        if (rnd + 1) % 50 == 0:
            print(f"  round {rnd + 1}: {len(sender.copies)} frames sent so far", flush=True)
    # the last run: until incoming and the outbox are empty (after it has
    # started: a SIGTERM before its handler is set would kill it outright)
    started_before = (root / "aurorad.log").read_text(errors="replace").count('"started"')
    proc = start(aurorad, cfg, log)
    deadline = time.monotonic() + 600
    while (root / "aurorad.log").read_text(errors="replace").count('"started"') == started_before:
        if time.monotonic() > deadline or proc.poll() is not None:
            sys.exit("aurorad did not start for the last run")
        time.sleep(0.05)
    while time.monotonic() < deadline:
        incoming = [n for n in os.listdir(root / "incoming") if not n.startswith(".")]
        outbox = [n for n in os.listdir(root / "outbox") if n.endswith(".aurp")]
        if not incoming and not outbox:
            break
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    rc = proc.wait(120)
    sender.stop = True
    sender.join(10)
    log.close()
    elapsed = time.monotonic() - t0

    restored = restore_all(aurorapack, sender.copies, root / "sent")
    quarantined = {n for n in os.listdir(root / "quarantine") if not n.endswith(".reason")}
    left = [n for n in os.listdir(root / "incoming") if not n.startswith(".")]
    once = dup = lost = wrong = 0
    for name, data in originals.items():
        copies = restored.get(name, [])
        bad = sum(1 for c in copies if c != data)
        wrong += bad
        good = len(copies) - bad
        if good == 1:
            once += 1
        elif good > 1:
            dup += 1
        elif name not in quarantined:
            lost += 1
    frames_quarantined = len(quarantined & set(originals))
    print(f"rounds: {a.rounds} ({elapsed:.0f} s); last run exit status {rc}")
    print(f"frames in: {len(originals)}")
    print(f"packed exactly once: {once}")
    print(f"duplicated: {dup}")
    print(f"quarantined: {frames_quarantined} frames (+ {len(quarantined & broken)} of "
          f"{len(broken)} broken files)")
    print(f"lost: {lost}")
    print(f"copies without a matching .sha256 sidecar: {sender.bad_sidecars}")
    print(f"wrong: {wrong}")
    print(f"left in incoming: {len(left)}")
    ok = lost == 0 and wrong == 0 and rc == 0 and not left
    if a.keep or not ok:
        print(f"work directory kept: {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

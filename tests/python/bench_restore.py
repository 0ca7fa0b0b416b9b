#!/usr/bin/env python3
"""Benchmark of issue 11 (numbers, not pass/fail):
  1. aurorapack.read of one W x H frame against the CLI's decode of it
     (`aurorapack unpack -o`, a process that writes the file), median of R;
  2. bulk restore of F frames with `unpack -C DIR -j 2` against `-j 1`
     (each with --threads 1, and -j 1 with its default threads).
Needs the installed package (scripts/test-python.sh's venv, or pip install ./python).
    python3 tests/python/bench_restore.py [--build build] [--frames 1000] [-W 1024 -H 1024] [-R 5]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import aurorapack


def timed(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("AURP_BUILD", "build"))
    ap.add_argument("--frames", type=int, default=1000)
    ap.add_argument("-W", type=int, default=1024)
    ap.add_argument("-H", type=int, default=1024)
    ap.add_argument("-R", type=int, default=5)
    a = ap.parse_args()
    cli = Path(a.build, "bin", "aurorapack").resolve()
    sim = Path(a.build, "bin", "aurorasim").resolve()
    work = Path(tempfile.mkdtemp(prefix="aurp-bench-"))
    try:
        f = work / "f.fits"
        subprocess.run([sim, "--one", f, "-W", str(a.W), "-H", str(a.H), "-q"], check=True)
        packed = aurorapack.pack(f)
        print(f"frame {a.W} x {a.H}: {f.stat().st_size} -> {packed.stat().st_size} bytes; "
              f"{os.cpu_count()} CPUs")
        out = work / "cli.fits"
        cli_s = timed(lambda: subprocess.run([cli, "unpack", "-q", "-f", "-o", out, packed], check=True), a.R)
        read_s = timed(lambda: aurorapack.read(packed), a.R)
        bytes_s = timed(lambda: aurorapack.unpack_bytes(packed.read_bytes()), a.R)
        print(f"CLI unpack (process, decode, write):  {cli_s * 1e3:8.1f} ms")
        print(f"aurorapack.read (decode + astropy):   {read_s * 1e3:8.1f} ms  ({read_s / cli_s:.2f}x the CLI)")
        print(f"aurorapack.unpack_bytes (decode):     {bytes_s * 1e3:8.1f} ms")

        arch = work / "archive"
        arch.mkdir()
        for i in range(a.frames):
            os.link(packed, arch / f"frame_{i:05d}.fits.aurp")
        results = {}
        for label, args in (("-j 1 --threads 1", ["-j", "1", "--threads", "1"]),
                            ("-j 2 --threads 1", ["-j", "2", "--threads", "1"]),
                            ("-j 1 (default threads)", ["-j", "1"]),
                            ("-j 2 (default threads)", ["-j", "2"])):
            dest = work / "out"
            t = time.perf_counter()
            subprocess.run([cli, "unpack", "-q", *args, "-C", dest, arch], check=True)
            results[label] = time.perf_counter() - t
            shutil.rmtree(dest)
            print(f"bulk restore of {a.frames} frames, {label:24s} {results[label]:8.2f} s "
                  f"({a.frames / results[label]:.1f} frames/s)")
        print(f"speed-up -j 2 over -j 1 (one thread a file): "
              f"{results['-j 1 --threads 1'] / results['-j 2 --threads 1']:.2f}x; "
              f"with default threads: {results['-j 1 (default threads)'] / results['-j 2 (default threads)']:.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

"""aurorapack as a user runs it: real files in real directories."""
import json
import os
import re
import shutil

import pytest

from conftest import run


def pack_unpack_roundtrip(aurorapack, src, tmp_path):
    """Packs src (a copy in tmp_path), unpacks to another name, checks bytes."""
    work = tmp_path / src.name
    if work != src:
        shutil.copyfile(src, work)
    out = run([aurorapack, "pack", work], check_rc=0)
    packed = work.with_name(work.name + ".aurp")
    assert packed.exists()
    assert str(work) in out.stdout
    restored = tmp_path / ("restored-" + src.name)
    run([aurorapack, "unpack", "-o", restored, packed], check_rc=0)
    assert restored.read_bytes() == src.read_bytes()
    return packed


def test_every_shared_frame_roundtrips(aurorapack, shared_frames, tmp_path):
    for frame in shared_frames:
        packed = pack_unpack_roundtrip(aurorapack, frame, tmp_path)
        size = frame.stat().st_size
        # the paper's method: 16-bit frames at 4.5-6 bpp, well under half
        assert packed.stat().st_size < 0.45 * size, f"{frame.name}: {packed.stat().st_size} of {size}"
        v = run([aurorapack, "verify", packed], check_rc=0)
        assert re.match(rf"{re.escape(str(packed))}: OK", v.stdout)


def test_info_reports_the_image(aurorapack, shared_frames, tmp_path):
    frame = next(f for f in shared_frames if "kast" in f.name)
    packed = pack_unpack_roundtrip(aurorapack, frame, tmp_path)
    text = run([aurorapack, "info", packed], check_rc=0).stdout
    assert "2112 x 350" in text and "profile lsmix, K=6 M=9" in text
    assert re.search(r"\d\.\d{3} bpp", text)
    img = [c for c in json.loads(run([aurorapack, "info", "--json", packed], check_rc=0).stdout)[0]["chunks"]
           if c["method"] == "image"][0]
    assert (img["N"], img["M"], img["profile"]) == (6, 9, "lsmix")
    # the paper profile shows its thresholds and escapes
    paper = tmp_path / "paper.aurp"
    run([aurorapack, "pack", "--profile", "paper", "-o", paper, frame], check_rc=0)
    packed = paper
    text = run([aurorapack, "info", packed], check_rc=0).stdout
    assert "N=11 M=7 T=13" in text
    assert re.search(r"T-=-?\d+ T\+=\d+", text)
    assert re.search(r"escapes \d+", text)
    assert re.search(r"\d\.\d{3} bpp", text)
    info = json.loads(run([aurorapack, "info", "--json", packed], check_rc=0).stdout)
    assert len(info) == 1 and info[0]["original_size"] == frame.stat().st_size
    images = [c for c in info[0]["chunks"] if c["method"] == "image"]
    assert len(images) == 1
    img = images[0]
    assert (img["width"], img["height"]) == (2112, 350)
    assert (img["N"], img["M"], img["T"], img["profile"]) == (11, 7, 13, "paper")
    assert img["t_lo"] <= 0 <= img["t_hi"]
    assert sum(c["raw_len"] for c in info[0]["chunks"]) == frame.stat().st_size
    assert abs(img["bpp"] - 8 * img["enc_len"] / (2112 * 350)) < 1e-3


def test_parameters_reach_the_stream(aurorapack, sim_fits, tmp_path):
    src = sim_fits("p.fits", 200, 40)
    out = tmp_path / "p.aurp"
    run([aurorapack, "pack", "-N", 5, "-M", 3, "-T", 0, "--profile", "paper", "--threads", 1,
         "-o", out, src], check_rc=0)
    img = [c for c in json.loads(run([aurorapack, "info", "--json", out]).stdout)[0]["chunks"]
           if c["method"] == "image"][0]
    assert (img["N"], img["M"], img["T"], img["profile"]) == (5, 3, 0, "paper")
    bad = run([aurorapack, "pack", "-N", 40, "-o", tmp_path / "q.aurp", src])
    assert bad.returncode == 2 and "-N" in bad.stderr
    # the default profile: -N and -M are its lags and window, which must be odd
    run([aurorapack, "pack", "-N", 3, "-M", 5, "-o", tmp_path / "l.aurp", src], check_rc=0)
    img = [c for c in json.loads(run([aurorapack, "info", "--json", tmp_path / "l.aurp"]).stdout)[0]["chunks"]
           if c["method"] == "image"][0]
    assert (img["N"], img["M"], img["profile"]) == (3, 5, "lsmix")
    bad = run([aurorapack, "pack", "-M", 4, "-o", tmp_path / "r.aurp", src])
    assert bad.returncode == 2 and "odd" in bad.stderr


def test_simulator_frames_roundtrip_several_at_once(aurorapack, aurorasim, tmp_path):
    frames = tmp_path / "frames"
    frames.mkdir()
    run([aurorasim, "--count", 3, "--interval", 0, "-W", 300, "-H", 80, "--seed", 4,
         "--start-time", "2014-07-15T13:29:40", frames], check_rc=0)
    fits = sorted(frames.glob("*.fits"))
    assert [f.name for f in fits] == ["20140715_132940.fits", "20140715_132955.fits",
                                      "20140715_133010.fits"]
    originals = {f: f.read_bytes() for f in fits}
    run([aurorapack, "pack", *fits], check_rc=0)
    packed = [f.with_name(f.name + ".aurp") for f in fits]
    v = run([aurorapack, "verify", *packed], check_rc=0)
    assert v.stdout.count(": OK") == 3
    for f in fits:
        f.unlink()
    run([aurorapack, "unpack", *packed], check_rc=0)
    for f, data in originals.items():
        assert f.read_bytes() == data


def test_overwrite_needs_force(aurorapack, sim_fits):
    src = sim_fits("o.fits", 64, 16)
    packed = src.with_name("o.fits.aurp")
    run([aurorapack, "pack", src], check_rc=0)
    packed.write_bytes(b"precious")
    again = run([aurorapack, "pack", src])
    assert again.returncode != 0
    assert str(packed) in again.stderr and "-f" in again.stderr
    assert packed.read_bytes() == b"precious"
    run([aurorapack, "pack", "-f", src], check_rc=0)
    assert packed.read_bytes() != b"precious"
    # unpack refuses to replace the original, -f allows it
    original = src.read_bytes()
    refused = run([aurorapack, "unpack", packed])
    assert refused.returncode != 0 and str(src) in refused.stderr and "-f" in refused.stderr
    src.write_bytes(b"changed")
    run([aurorapack, "unpack", "-f", packed], check_rc=0)
    assert src.read_bytes() == original
    # no temporary files left behind
    assert sorted(p.name for p in src.parent.iterdir()) == ["o.fits", "o.fits.aurp"]


def test_output_option(aurorapack, sim_fits, tmp_path):
    a, b = sim_fits("a.fits", 32, 8), sim_fits("b.fits", 32, 8, seed=2)
    out = tmp_path / "sub.aurp"
    run([aurorapack, "pack", "-o", out, a], check_rc=0)
    assert out.exists() and not a.with_name("a.fits.aurp").exists()
    two = run([aurorapack, "pack", "-o", out, a, b])
    assert two.returncode == 2 and "-o" in two.stderr
    restored = tmp_path / "x.fits"
    run([aurorapack, "unpack", "-o", restored, out], check_rc=0)
    assert restored.read_bytes() == a.read_bytes()


def test_damaged_stream_fails_verify_and_unpack(aurorapack, sim_fits, tmp_path):
    good_src = sim_fits("good.fits", 128, 32)
    bad_src = sim_fits("bad.fits", 128, 32, seed=9)
    run([aurorapack, "pack", good_src, bad_src], check_rc=0)
    good, bad = (tmp_path / "good.fits.aurp"), (tmp_path / "bad.fits.aurp")
    data = bytearray(bad.read_bytes())
    data[len(data) // 2] ^= 0x10
    bad.write_bytes(bytes(data))
    v = run([aurorapack, "verify", good, bad])
    assert v.returncode == 1
    lines = v.stdout.strip().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"{good}: OK")
    assert lines[1].startswith(f"{bad}: FAILED")
    u = run([aurorapack, "unpack", bad])
    assert u.returncode == 1 and str(bad) in u.stderr
    assert not bad_src.with_name("bad.fits.restored").exists()
    # a truncated stream too
    cut = tmp_path / "cut.aurp"
    cut.write_bytes(good.read_bytes()[:-7])
    v = run([aurorapack, "verify", cut])
    assert v.returncode == 1 and v.stdout.startswith(f"{cut}: FAILED")


def test_non_fits_input_refused_unless_any(aurorapack, tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("station log: all quiet\n" * 50)
    r = run([aurorapack, "pack", text])
    assert r.returncode == 1
    assert str(text) in r.stderr and "not a FITS file" in r.stderr
    assert not (tmp_path / "notes.txt.aurp").exists()
    run([aurorapack, "pack", "--any", text], check_rc=0)
    info = run([aurorapack, "info", tmp_path / "notes.txt.aurp"], check_rc=0).stdout
    assert "general-purpose coding (no 16-bit 2-D image)" in info
    out = tmp_path / "back.txt"
    run([aurorapack, "unpack", "-o", out, tmp_path / "notes.txt.aurp"], check_rc=0)
    assert out.read_bytes() == text.read_bytes()


def test_fits_without_16bit_image_uses_general_coder(aurorapack, aurorasim, tmp_path):
    d = tmp_path / "b32"
    d.mkdir()
    run([aurorasim, "--count", 1, "--interval", 0, "-W", 100, "-H", 30, "--broken", "bitpix32",
         "--start-time", "2014-07-15T13:29:40", d], check_rc=0)
    src = d / "20140715_132940.fits"
    r = run([aurorapack, "pack", src], check_rc=0)
    assert "general-purpose coding" in r.stdout and "BITPIX=32" in r.stdout
    packed = d / "20140715_132940.fits.aurp"
    assert "general-purpose coding (no 16-bit 2-D image)" in run([aurorapack, "info", packed]).stdout
    info = json.loads(run([aurorapack, "info", "--json", packed]).stdout)[0]
    assert info["coding"] == "general"
    restored = tmp_path / "r.fits"
    run([aurorapack, "unpack", "-o", restored, packed], check_rc=0)
    assert restored.read_bytes() == src.read_bytes()


@pytest.mark.parametrize("kind,reason", [("truncated", "truncated"), ("garbage", "SIMPLE")])
def test_broken_fits_refused_naming_reason(aurorapack, aurorasim, tmp_path, kind, reason):
    run([aurorasim, "--count", 1, "--interval", 0, "-W", 100, "-H", 30, "--broken", kind,
         "--start-time", "2014-07-15T13:29:40", tmp_path], check_rc=0)
    src = tmp_path / "20140715_132940.fits"
    r = run([aurorapack, "pack", src])
    assert r.returncode == 1
    assert str(src) in r.stderr and reason in r.stderr
    assert not (tmp_path / "20140715_132940.fits.aurp").exists()


def test_missing_input_names_file_and_reason(aurorapack, tmp_path):
    for cmd in ("pack", "unpack", "verify", "info"):
        missing = tmp_path / "nothere.fits.aurp"
        r = run([aurorapack, cmd, missing])
        assert r.returncode == 1, cmd
        assert str(missing) in (r.stderr + r.stdout) and "No such file" in (r.stderr + r.stdout), cmd


def test_unpack_needs_aurp_suffix_or_output(aurorapack, sim_fits):
    src = sim_fits("s.fits", 16, 16)
    r = run([aurorapack, "unpack", src])
    assert r.returncode == 1 and ".aurp" in r.stderr and str(src) in r.stderr


def test_info_on_a_non_stream_fails(aurorapack, sim_fits):
    src = sim_fits("s.fits", 16, 16)
    r = run([aurorapack, "info", src])
    assert r.returncode == 1 and str(src) in r.stderr


def test_gpu_request_fails_with_reason_or_works(aurorapack, sim_fits, tmp_path):
    src = sim_fits("g.fits", 128, 32)
    out = tmp_path / "g.aurp"
    r = run([aurorapack, "pack", "--gpu", "0", "-o", out, src])
    if r.returncode != 0:  # no GPU (this machine): the reason is given, nothing written
        assert "GPU" in r.stderr or "CUDA" in r.stderr, r.stderr
        assert not out.exists()
    fb = run([aurorapack, "pack", "-f", "--gpu", "0", "--gpu-fallback", "-o", out, src], check_rc=0)
    cpu = tmp_path / "c.aurp"
    run([aurorapack, "pack", "--cpu", "-o", cpu, src], check_rc=0)
    # every backend writes the same bytes
    assert out.read_bytes() == cpu.read_bytes(), fb.stderr
    bad = run([aurorapack, "pack", "--gpu", "zero", src])
    assert bad.returncode == 2 and "--gpu" in bad.stderr


def bench_rows(out, codec):
    """the lines of `aurorapack bench`'s table whose codec column starts with codec"""
    return [l for l in out.splitlines() if l.strip().startswith(codec)]


def test_bench_prints_a_table(aurorapack, sim_fits):
    src = sim_fits("b.fits", 160, 48)
    r = run([aurorapack, "bench", "--repeat", 1, "--cpu", src], check_rc=0, timeout=300)
    row = bench_rows(r.stdout, "aurorapack lsmix")
    assert len(row) == 1, r.stdout
    fields = row[0].split(")")[1].split()
    size, bpp = int(fields[0]), float(fields[1])
    assert size > 0 and abs(bpp - 8 * size / (160 * 48)) < 0.01
    assert "xz -9" in r.stdout and "bzip2 -9" in r.stdout
    assert "process start" in r.stdout
    # CharLS (a test dependency) is opened at run time: its row has a size and
    # the pixels it decoded are the input's
    jls = bench_rows(r.stdout, "JPEG-LS (CharLS)")
    assert len(jls) == 1 and jls[0].rstrip().endswith("in process, pixels only"), r.stdout
    assert int(jls[0].split(")")[1].split()[0]) > 0


def test_bench_without_charls_says_so_and_runs_the_rest(aurorapack, sim_fits, tmp_path):
    src = sim_fits("b.fits", 96, 32)
    for lib, why in ((tmp_path / "absent.so", "not installed"),
                     ("libm.so.6", "lacks charls_jpegls_encoder_create")):
        env = dict(os.environ, AURP_CHARLS_LIB=str(lib))
        r = run([aurorapack, "bench", "--repeat", 1, "--cpu", src], check_rc=0, timeout=300, env=env)
        jls = bench_rows(r.stdout, "JPEG-LS (CharLS)")
        assert len(jls) == 1 and why in jls[0], r.stdout
        assert bench_rows(r.stdout, "aurorapack lsmix")


def test_start_loads_neither_cxx_runtime_nor_charls(aurorapack):
    """Every pack and unpack is a process start: the C++ runtime (for cudart)
    is linked statically and CharLS, a peer of `bench` only, is opened by
    `bench`, so neither is a shared library aurorapack needs."""
    dyn = run(["readelf", "-d", aurorapack], check_rc=0).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn)
    assert "libc.so.6" in needed, dyn
    assert not [n for n in needed if n.startswith(("libstdc++", "libcharls"))], needed


def test_help_and_version(aurorapack):
    h = run([aurorapack, "--help"], check_rc=0).stdout
    for cmd in ("pack", "unpack", "verify", "info", "bench"):
        assert cmd in h
    assert re.match(r"aurorapack \d+\.\d+", run([aurorapack, "--version"], check_rc=0).stdout)
    assert run([aurorapack, "frobnicate"]).returncode == 2
    assert run([aurorapack]).returncode == 2

"""aurorasim as the daemon tests and the demo use it."""
import signal
import subprocess
import time

from conftest import run


def test_names_by_capture_time_and_leaves_no_temp_files(aurorasim, tmp_path):
    r = run([aurorasim, "--count", 4, "--interval", 0, "-W", 64, "-H", 16, "--prefix", "cam1_",
             "--start-time", "2014-07-15T23:59:30", "--start-index", 100, tmp_path], check_rc=0)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["cam1_20140715_235930.fits", "cam1_20140715_235945.fits",
                     "cam1_20140716_000000.fits", "cam1_20140716_000015.fits"]
    assert r.stdout.split() == [str(tmp_path / n) for n in names]
    first = (tmp_path / names[0]).read_bytes()
    header = first[:2880].decode("ascii")
    for card in ("BITPIX  =                   16", "NAXIS1  =                   64",
                 "NAXIS2  =                   16", "BZERO   =                32768",
                 "DATE-OBS= '2014-07-15T23:59:30'", "FRAMEIDX=                  100",
                 "EXPTIME", "INSTRUME"):
        assert card in header, card
    assert len(first) == 2880 * 2


def test_same_seed_and_index_same_file(aurorasim, tmp_path):
    a, b, c = tmp_path / "a.fits", tmp_path / "b.fits", tmp_path / "c.fits"
    common = ["-W", 50, "-H", 20, "--seed", 3, "--start-time", "2014-07-15T00:00:00"]
    run([aurorasim, "--one", a, "--index", 7, *common], check_rc=0)
    run([aurorasim, "--one", b, "--index", 7, *common], check_rc=0)
    run([aurorasim, "--one", c, "--index", 8, *common], check_rc=0)
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes()[2880:] != c.read_bytes()[2880:]


def test_sigterm_stops_between_frames(aurorasim, tmp_path):
    proc = subprocess.Popen([str(aurorasim), "--interval", "30", "-W", "32", "-H", "8", str(tmp_path)],
                            stdout=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline().strip()
        assert first.endswith(".fits")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=5) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert [p.name for p in tmp_path.iterdir()] == [first.rsplit("/", 1)[1]]


def test_slow_mode_grows_the_final_file(aurorasim, tmp_path):
    proc = subprocess.Popen([str(aurorasim), "--count", "1", "--write-mode", "slow",
                             "--slow-seconds", "2", "-W", "256", "-H", "64", "--start-time",
                             "2014-07-15T13:29:40", str(tmp_path)], stdout=subprocess.PIPE)
    final = tmp_path / "20140715_132940.fits"
    sizes = []
    deadline = time.monotonic() + 10
    while proc.poll() is None and time.monotonic() < deadline:
        if final.exists():
            sizes.append(final.stat().st_size)
        time.sleep(0.1)
    assert proc.wait(timeout=10) == 0
    full = final.stat().st_size
    assert full == 2880 + 256 * 64 * 2 + (-(256 * 64 * 2) % 2880)
    partial = [s for s in sizes if 0 < s < full]
    assert len(set(partial)) >= 2, f"sizes seen while writing: {sizes}"


def test_broken_every_other_frame(aurorasim, tmp_path):
    run([aurorasim, "--count", 4, "--interval", 0, "-W", 40, "-H", 10, "--broken", "garbage",
         "--broken-every", 2, "--start-time", "2014-07-15T13:29:40", tmp_path], check_rc=0)
    starts = [p.read_bytes()[:9] for p in sorted(tmp_path.iterdir())]
    assert [s == b"SIMPLE  =" for s in starts] == [False, True, False, True]


def test_bad_arguments(aurorasim, tmp_path):
    assert run([aurorasim, "--write-mode", "fast", tmp_path]).returncode == 2
    r = run([aurorasim, "--count", 1, tmp_path / "missing"])
    assert r.returncode == 1 and "missing" in r.stderr
    assert run([aurorasim, "-W", 0, "--one", tmp_path / "x.fits"]).returncode == 2


def test_kinds_are_named_in_the_header_and_repeat_per_seed(aurorasim, tmp_path):
    common = ["-W", 256, "-H", 64, "--start-time", "2014-07-15T00:00:00"]
    default = tmp_path / "default.fits"
    run([aurorasim, "--one", default, *common], check_rc=0)
    assert b"SIMKIND" not in default.read_bytes()[:2880]
    for kind in ("aurora", "dark", "bias", "twilight", "arc", "echelle", "echelle-arc"):
        a, b, c = tmp_path / f"{kind}_a.fits", tmp_path / f"{kind}_b.fits", tmp_path / f"{kind}_c.fits"
        run([aurorasim, "--one", a, "--kind", kind, "--seed", 5, *common], check_rc=0)
        run([aurorasim, "--one", b, "--kind", kind, "--seed", 5, *common], check_rc=0)
        run([aurorasim, "--one", c, "--kind", kind, "--seed", 6, *common], check_rc=0)
        assert a.read_bytes() == b.read_bytes(), kind
        assert a.read_bytes()[2880:] != c.read_bytes()[2880:], kind
        header = a.read_bytes()[:2880].decode("ascii")
        if kind == "aurora":
            assert a.read_bytes() != default.read_bytes()  # seed 5, not 1
            assert "SIMKIND" not in header
        else:
            assert f"SIMKIND = '{kind}" in header, kind
            assert "BIASSEC = '[249:256,1:64]'" in header, kind


def test_level_scales_the_light(aurorasim, tmp_path):
    dim, bright = tmp_path / "dim.fits", tmp_path / "bright.fits"
    common = ["--kind", "twilight", "-W", 256, "-H", 32, "--seed", 2, "--start-time", "0"]
    run([aurorasim, "--one", dim, "--level", "0.25", *common], check_rc=0)
    run([aurorasim, "--one", bright, *common], check_rc=0)
    assert "SIMLEVEL=                 0.25" in dim.read_bytes()[:2880].decode("ascii")

    def mean_count(path):
        data = path.read_bytes()[2880:2880 + 256 * 32 * 2]
        values = [int.from_bytes(data[i:i + 2], "big", signed=True) + 32768 for i in range(0, len(data), 2)]
        return sum(values) / len(values)

    assert mean_count(bright) > 3 * mean_count(dim)


def test_bad_kind_and_level(aurorasim, tmp_path):
    r = run([aurorasim, "--one", tmp_path / "x.fits", "--kind", "nebula"])
    assert r.returncode == 2 and "echelle-arc" in r.stderr
    assert run([aurorasim, "--one", tmp_path / "x.fits", "--level", "-1"]).returncode == 2

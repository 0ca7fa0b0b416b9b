"""aurorapack unpack for whole archives (issue 11): -C DIR, '-' and -o -,
-j N, directories and --files-from, the progress line; info on damaged and
truncated files; the output limit (--max-output).  Real processes on real
files and directories."""
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import run


@pytest.fixture
def archive(aurorapack, sim_fits, tmp_path):
    """A small archive: arch/a.fits.aurp, arch/b.fits.aurp, arch/night2/c.fits.aurp,
    with the originals kept in orig/."""
    orig = tmp_path / "orig"
    arch = tmp_path / "arch"
    (arch / "night2").mkdir(parents=True)
    orig.mkdir()
    where = {"a": arch, "b": arch, "c": arch / "night2"}
    originals = {}
    for i, (name, d) in enumerate(where.items()):
        src = sim_fits(f"{name}.fits", 128, 32, seed=i + 1)
        run([aurorapack, "pack", "-q", "-o", d / f"{name}.fits.aurp", src], check_rc=0)
        originals[name] = src.read_bytes()
        shutil.move(src, orig / src.name)
    return arch, originals


def test_directory_into_output_dir_keeps_the_tree(aurorapack, archive, tmp_path):
    arch, originals = archive
    out = tmp_path / "restored"
    r = run([aurorapack, "unpack", "-j", "2", "-C", out, arch], check_rc=0)
    assert r.stdout.count("checksum OK") == 3
    assert (out / "a.fits").read_bytes() == originals["a"]
    assert (out / "b.fits").read_bytes() == originals["b"]
    assert (out / "night2" / "c.fits").read_bytes() == originals["c"]
    # the archive is untouched: no restored file, no temporary file beside it
    assert sorted(p.name for p in arch.rglob("*") if p.is_file()) == \
        ["a.fits.aurp", "b.fits.aurp", "c.fits.aurp"]
    # again without -f: every file refused, nothing replaced
    again = run([aurorapack, "unpack", "-C", out, arch], check_rc=1)
    assert again.stderr.count("already exists") == 3


def test_read_only_archive_restores_into_another_directory(aurorapack, archive):
    """The archive cannot be written (as root the tool runs as nobody, for
    whom the archive is read-only)."""
    arch, originals = archive
    root = Path(tempfile.mkdtemp(prefix="aurp-ro-"))
    try:
        os.chmod(root, 0o755)
        ro = root / "archive"
        shutil.copytree(arch, ro)
        out = root / "out"
        out.mkdir()
        os.chmod(out, 0o777)
        binary, wrap = aurorapack, []
        if os.geteuid() == 0:
            if not shutil.which("setpriv"):
                pytest.skip("running as root without setpriv: cannot make a directory read-only to us")
            binary = root / "aurorapack"  # the build tree may sit under a 0700 home
            shutil.copy2(aurorapack, binary)
            wrap = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        subprocess.run(["chmod", "-R", "a-w", str(ro)], check=True)
        # unpacking in place fails with the reason, and leaves nothing behind
        inplace = run([*wrap, binary, "unpack", ro / "a.fits.aurp"], check_rc=1)
        assert "Permission denied" in inplace.stderr or "Read-only" in inplace.stderr, inplace.stderr
        run([*wrap, binary, "unpack", "-q", "-C", out, ro], check_rc=0)
        assert (out / "a.fits").read_bytes() == originals["a"]
        assert (out / "night2" / "c.fits").read_bytes() == originals["c"]
        assert sorted(p.name for p in ro.rglob("*") if p.is_file()) == \
            ["a.fits.aurp", "b.fits.aurp", "c.fits.aurp"]
    finally:
        subprocess.run(["chmod", "-R", "u+rwx", str(root)], check=False)
        shutil.rmtree(root, ignore_errors=True)


def test_stdin_and_stdout(aurorapack, archive, tmp_path):
    arch, originals = archive
    packed = (arch / "a.fits.aurp").read_bytes()
    # '-' reads standard input and, with no -o, writes standard output
    p = subprocess.run([str(aurorapack), "unpack", "-"], input=packed, capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout == originals["a"]
    # -o - : standard output, nothing else on it
    p = subprocess.run([str(aurorapack), "unpack", "-o", "-", str(arch / "b.fits.aurp")],
                       capture_output=True, timeout=60)
    assert p.returncode == 0 and p.stdout == originals["b"]
    # '-' into a named file
    out = tmp_path / "from_stdin.fits"
    p = subprocess.run([str(aurorapack), "unpack", "-o", str(out), "-"], input=packed,
                       capture_output=True, timeout=60)
    assert p.returncode == 0 and out.read_bytes() == originals["a"]
    # a damaged stream on stdin writes nothing to stdout
    bad = bytearray(packed)
    bad[len(bad) // 2] ^= 0x40
    p = subprocess.run([str(aurorapack), "unpack", "-"], input=bytes(bad), capture_output=True, timeout=60)
    assert p.returncode == 1 and p.stdout == b""
    assert b"-: cannot unpack" in p.stderr
    # stdin has no name for -C
    p = subprocess.run([str(aurorapack), "unpack", "-C", str(tmp_path), "-"], input=packed,
                       capture_output=True, timeout=60)
    assert p.returncode == 1 and b"use -o" in p.stderr
    # verify and info read '-' too (the same reader as unpack's)
    p = subprocess.run([str(aurorapack), "verify", "-"], input=packed, capture_output=True, timeout=60)
    assert p.returncode == 0 and p.stdout.startswith(b"-: OK (%d bytes restored" % len(originals["a"])), p.stdout
    p = subprocess.run([str(aurorapack), "verify", "-"], input=bytes(bad), capture_output=True, timeout=60)
    assert p.returncode == 1 and p.stdout.startswith(b"-: FAILED: corrupt stream"), p.stdout
    p = subprocess.run([str(aurorapack), "info", "-"], input=packed, capture_output=True, timeout=60)
    assert p.returncode == 0 and p.stdout.startswith(b"-: format 1, %d -> %d bytes" % (len(originals["a"]), len(packed))), \
        p.stdout


def test_files_from_a_list_of_many_thousands(aurorapack, archive, tmp_path):
    """A list file of 6000 names (more than a shell glob comfortably takes),
    restored with -j 2; one missing name fails alone."""
    arch, originals = archive
    many = tmp_path / "many"
    many.mkdir()
    packed = (arch / "a.fits.aurp").read_bytes()
    names = []
    for i in range(6000):
        p = many / f"frame_{i:05d}.fits.aurp"
        p.write_bytes(packed)
        names.append(str(p))
    names.insert(3000, str(many / "missing.fits.aurp"))
    listing = tmp_path / "list.txt"
    listing.write_text("\n".join(names) + "\n")
    out = tmp_path / "out"
    r = run([aurorapack, "unpack", "-q", "-j", "2", "-C", out, "--files-from", listing],
            check_rc=1, timeout=600)
    assert "missing.fits.aurp: cannot open" in r.stderr
    restored = sorted(out.iterdir())
    assert len(restored) == 6000
    assert restored[0].name == "frame_00000.fits" and restored[-1].name == "frame_05999.fits"
    for p in restored[::500]:
        assert p.read_bytes() == originals["a"]
    # the list on standard input
    out2 = tmp_path / "out2"
    p = subprocess.run([str(aurorapack), "unpack", "-q", "-C", str(out2), "--files-from", "-"],
                       input="\n".join(names[:50] + names[3001:3050]), text=True,
                       capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert len(list(out2.iterdir())) == 99


def test_jobs_give_the_same_files_as_one(aurorapack, archive, tmp_path):
    arch, originals = archive
    for jobs in ("1", "3"):
        out = tmp_path / f"j{jobs}"
        run([aurorapack, "unpack", "-q", "-j", jobs, "-C", out, arch], check_rc=0)
        assert (out / "b.fits").read_bytes() == originals["b"]
    bad = run([aurorapack, "unpack", "-j", "0", arch])
    assert bad.returncode == 2 and "-j" in bad.stderr


def test_progress_line_on_a_terminal(aurorapack, archive, tmp_path):
    """On a terminal (a pty) a progress line counts the files; through a
    pipe, or with -q, there is none."""
    import pty
    arch, _ = archive
    out = tmp_path / "out"
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(str(aurorapack), [str(aurorapack), "unpack", "-C", str(out), str(arch)])
    seen = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert b"unpack: 3/3 files, 0 failed" in seen, seen
    piped = run([aurorapack, "unpack", "-q", "-f", "-C", out, arch], check_rc=0)
    assert piped.stderr == ""


def test_umask_is_honoured(aurorapack, archive, tmp_path):
    arch, _ = archive
    out = tmp_path / "out"
    subprocess.run(f"umask 077; '{aurorapack}' unpack -q -C '{out}' '{arch / 'a.fits.aurp'}'",
                   shell=True, check=True)
    assert (out / "a.fits").stat().st_mode & 0o777 == 0o600


def test_info_on_truncated_and_damaged_files(aurorapack, archive, tmp_path):
    arch, originals = archive
    packed = (arch / "a.fits.aurp").read_bytes()
    cut = tmp_path / "cut.fits.aurp"
    cut.write_bytes(packed[: len(packed) - 200])
    r = run([aurorapack, "info", cut], check_rc=1)
    assert "DAMAGED: truncated" in r.stdout
    # the last chunk is cut off whole: at least its header and what is cut of the one before
    missing = int(r.stdout.split("at least ")[1].split(" bytes missing")[0])
    assert 0 < missing <= 200
    assert "chunk 0: text" in r.stdout  # what is still there is listed (the header: a text chunk)
    j = json.loads(run([aurorapack, "info", "--json", cut]).stdout)[0]
    assert j["truncated"] is True and j["missing_bytes"] == missing
    assert j["original_size"] == len(originals["a"])
    short = tmp_path / "short.fits.aurp"
    short.write_bytes(packed[:30])
    r = run([aurorapack, "info", short], check_rc=1)
    assert "truncated" in r.stdout
    flipped = bytearray(packed)
    flipped[-50] ^= 1
    bad = tmp_path / "bad.fits.aurp"
    bad.write_bytes(bytes(flipped))
    r = run([aurorapack, "info", bad], check_rc=1)
    assert "DAMAGED: stream damaged" in r.stdout and "bytes missing" not in r.stdout
    assert "checksum does not match" in r.stdout
    # verify and unpack say the same file is bad; unpack writes nothing
    assert "FAILED" in run([aurorapack, "verify", cut], check_rc=1).stdout
    run([aurorapack, "unpack", "-C", tmp_path / "none", cut], check_rc=1)
    assert not any((tmp_path / "none").glob("*")) if (tmp_path / "none").exists() else True


def test_max_output_refuses_what_declares_more(aurorapack, archive, tmp_path):
    arch, originals = archive
    f = arch / "a.fits.aurp"
    size = len(originals["a"])
    r = run([aurorapack, "verify", "--max-output", str(size - 1), f], check_rc=1)
    assert "output limit exceeded" in r.stdout
    run([aurorapack, "verify", "--max-output", str(size), f], check_rc=0)
    r = run([aurorapack, "unpack", "--max-output", "1K", "-C", tmp_path / "o", f], check_rc=1)
    assert "over the limit of 1024" in r.stderr
    for bad in ("0", "-5", "12Q", "lots"):
        assert run([aurorapack, "unpack", "--max-output", bad, f]).returncode == 2


def hostile_stream(original_size: int, raw: int, payload: bytes) -> bytes:
    """A container with one general chunk, both checksums right where the
    library can make them (aurp_checksum from libaurorapack)."""
    import ctypes
    import struct
    from conftest import build_dir
    lib = ctypes.CDLL(str(build_dir() / "lib" / "libaurorapack.so.1"))
    lib.aurp_checksum.restype = ctypes.c_uint64
    lib.aurp_checksum.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    chunks = bytes([1]) + bytes(7) + struct.pack("<QQ", raw, len(payload)) + payload
    head = b"\x89AURP\r\n\x1a" + struct.pack("<HHIQQ", 1, 0, 1, original_size, 0)
    return head + struct.pack("<Q", lib.aurp_checksum(chunks, len(chunks))) + chunks


def test_a_stream_declaring_2_pow_62_bytes_is_refused_cleanly(aurorapack, tmp_path):
    """A 80-byte stream that declares 2^62 bytes: refused by the limit, and
    with the largest limit by what 16 bytes can restore, never allocated."""
    f = tmp_path / "huge.fits.aurp"
    f.write_bytes(hostile_stream(1 << 62, 1 << 62, bytes(16)))
    r = run([aurorapack, "verify", f], check_rc=1)
    assert "output limit exceeded" in r.stdout
    r = run([aurorapack, "unpack", "--max-output", "8000000T", "-o", tmp_path / "x", f], check_rc=1)
    assert "cannot be general-coded" in r.stderr, r.stderr
    assert not (tmp_path / "x").exists()
    r = run([aurorapack, "info", f], check_rc=0)  # the header and chunk are well formed
    assert "4611686018427387904" in r.stdout

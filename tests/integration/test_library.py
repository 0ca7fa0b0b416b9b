"""libaurorapack as a user gets it: `make install-lib` into a prefix, then a
small C program built with pkg-config (shared and static) that packs a real
frame, unpacks it and checks the bytes; the shared library's soname and
its exported symbols."""
import os
import re
import shutil

import pytest

from conftest import REPO, build_dir, run

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <aurorapack.h>

int main(int argc, char **argv)
{
    FILE *f = fopen(argv[1], "rb");
    if (!f) return 2;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *file = malloc(n);
    if (fread(file, 1, n, f) != (size_t)n) return 2;
    fclose(f);
    aurp_error err = {{0}};
    aurorapack_layout layout;
    uint8_t *packed, *back;
    size_t plen, blen;
    if (aurorapack_pack(file, n, NULL, 2, 0, &packed, &plen, &layout, &err) != AURP_OK) {
        fprintf(stderr, "pack: %s\n", err.msg);
        return 1;
    }
    uint64_t size = 0;
    if (aurp_check_stream(packed, plen, 0, &size, &err) != AURP_OK || size != (uint64_t)n) return 1;
    if (aurorapack_unpack(packed, plen, 2, 0, &back, &blen, &err) != AURP_OK) {
        fprintf(stderr, "unpack: %s\n", err.msg);
        return 1;
    }
    if (blen != (size_t)n || memcmp(back, file, n) != 0) return 1;
    aurp_status limited = aurorapack_unpack(packed, plen, 1, 1000, &back, &blen, &err);
    printf("libaurorapack %s: %ld -> %zu bytes, %d image(s), limit: %s\n", aurorapack_version(), n,
           plen, layout.nimages, aurp_status_name(limited));
    aurorapack_free(packed);
    free(file);
    return limited == AURP_ERR_LIMIT ? 0 : 1;
}
"""


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    if not shutil.which("pkg-config"):
        pytest.skip("pkg-config is not installed")
    prefix = tmp_path_factory.mktemp("prefix")
    run(["make", "-s", "-C", REPO, f"BUILD={build_dir()}", "install-lib", f"PREFIX={prefix}"],
        check_rc=0, timeout=600)
    return prefix


def pkg_config(prefix, *args):
    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    return run(["pkg-config", *args, "aurorapack"], check_rc=0, env=env).stdout.split()


def test_installed_layout_and_pkg_config(prefix):
    assert (prefix / "include" / "aurorapack" / "aurorapack.h").exists()
    assert (prefix / "include" / "aurorapack" / "aurp.h").exists()
    so = prefix / "lib" / "libaurorapack.so"
    assert os.readlink(so) == "libaurorapack.so.1"
    assert os.readlink(prefix / "lib" / "libaurorapack.so.1") == "libaurorapack.so.1.0.0"
    assert (prefix / "lib" / "libaurorapack.a").exists()
    assert pkg_config(prefix, "--modversion") == ["1.0.0"]
    dyn = run(["objdump", "-p", so], check_rc=0).stdout
    assert re.search(r"SONAME\s+libaurorapack\.so\.1\b", dyn)
    assert not re.search(r"NEEDED\s+lib(uv|yaml|systemd)", dyn), "the library needs no daemon library"


@pytest.mark.parametrize("link", ["shared", "static"])
def test_a_c_program_built_with_pkg_config(prefix, link, tmp_path, shared_frames):
    src = tmp_path / "prog.c"
    src.write_text(PROGRAM)
    exe = tmp_path / f"prog_{link}"
    if link == "shared":
        flags = pkg_config(prefix, "--cflags", "--libs")
    else:  # the archive by path; cfitsio stays shared (Debian's static cfitsio wants libcurl.a)
        flags = pkg_config(prefix, "--cflags") + [str(prefix / "lib" / "libaurorapack.a"),
                                                  "-lcfitsio", "-lm", "-lpthread"]
    run(["cc", "-std=c11", "-Wall", "-Werror", "-o", exe, src, *flags], check_rc=0)
    env = dict(os.environ, LD_LIBRARY_PATH=str(prefix / "lib"))
    r = run([exe, shared_frames[0]], env=env, check_rc=0)
    assert "libaurorapack 1.0.0" in r.stdout and "limit: output limit exceeded" in r.stdout
    needed = run(["objdump", "-p", exe], check_rc=0).stdout
    assert ("libaurorapack.so.1" in needed) == (link == "shared")


def test_every_public_function_of_the_headers_is_exported(prefix):
    """aurp.h and aurorapack.h against the shared library's dynamic symbols:
    a function added to a header must be added to lib/aurorapack.map."""
    declared = set()
    for h in ("aurp.h", "aurorapack.h"):
        text = (prefix / "include" / "aurorapack" / h).read_text()
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        types = set(re.findall(r"}\s*(\w+)\s*;", text)) | set(re.findall(r"\btypedef\s+(\w+)", text))
        declared |= set(re.findall(r"\b((?:aurp|aurorapack)_\w+)\s*\(", text)) - types
    exported = set(run(["nm", "-D", "--defined-only", prefix / "lib" / "libaurorapack.so"],
                       check_rc=0).stdout.split())
    exported = {s.split("@")[0] for s in exported}
    missing = sorted(d for d in declared if d not in exported)
    assert not missing, f"declared but not exported: {missing}"
    internal = sorted(s for s in exported if s.startswith(("aurp_rans", "aurp_stream", "aurp_gc",
                                                            "aurp_predictor", "frame_", "fits_")))
    assert not internal, f"internal symbols exported: {internal}"

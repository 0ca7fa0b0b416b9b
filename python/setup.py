"""The aurorapack Python package (docs/LIBRARY.md).

    make lib                 # builds build/lib/libaurorapack.so.1
    pip install ./python     # no network: setuptools, numpy, astropy from Debian

The package calls libaurorapack through ctypes.  At build time the library
is copied into the package when it is found: $AURORAPACK_LIBDIR, else the
repository's build/lib.  Without a copy, the package loads the installed
libaurorapack.so.1 (make install-lib) at import time.

There is deliberately no pyproject.toml: with one, pip builds in an isolated
environment and downloads setuptools, which an offline Debian machine cannot.
"""
import os
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
SONAME = "libaurorapack.so.1"


def library_to_bundle():
    for d in (os.environ.get("AURORAPACK_LIBDIR"), HERE.parent / "build" / "lib"):
        if d and (Path(d) / SONAME).exists():
            return (Path(d) / SONAME).resolve()
    return None


class build_py_with_library(build_py):
    """Copies libaurorapack into the built package (not into the sources)."""

    def run(self):
        super().run()
        lib = library_to_bundle()
        if lib is not None:
            dest = Path(self.build_lib) / "aurorapack" / SONAME
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(lib, dest)
            os.chmod(dest, 0o755)
            print(f"aurorapack: bundled {lib}")
        else:
            print("aurorapack: no libaurorapack found to bundle; the installed one will be used")


setup(
    name="aurorapack",
    version="1.0.0",
    description="Read, unpack, verify and pack .aurp spectrograph frames (libaurorapack)",
    packages=["aurorapack"],
    package_data={"aurorapack": ["py.typed"]},
    python_requires=">=3.9",
    install_requires=["numpy", "astropy"],
    extras_require={"dask": ["dask", "distributed"]},
    cmdclass={"build_py": build_py_with_library},
    zip_safe=False,
)

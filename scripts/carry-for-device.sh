#!/bin/bash
# Gathers what the device machines lack into .carry/ (ignored by git): the
# built programs and the shared libraries they link that are not part of the
# base system there (libuv, cfitsio and its dependencies, libyaml, libsystemd)
# (the real frames travel with the tree in tests/data/real).  aurorapack and
# aurorad open cfitsio at run time (fits/cfitsio_api.h), by its SONAME through
# LD_LIBRARY_PATH=.carry/lib; aurorasim links it, so ldd brings it along.
# CharLS is opened the same way by `aurorapack bench`.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
mkdir -p .carry/bin .carry/lib
cp "$BUILD"/bin/aurorad "$BUILD"/bin/aurorapack "$BUILD"/bin/aurorasim .carry/bin/
ldd .carry/bin/* | awk '/=>/ {print $3}' | sort -u |
    grep -v -E '/lib(c|m|dl|rt|pthread|resolv|stdc\+\+|gcc_s)\.so' |
    xargs -r -I{} cp -L {} .carry/lib/
# CharLS, which `aurorapack bench` opens at run time (cli/bench_charls.c), so
# ldd does not list it
charls=$(ldconfig -p | awk '/libcharls\.so\.2 / {print $NF; exit}')
if [ -n "$charls" ]; then cp -L "$charls" .carry/lib/; fi
# what the programs were built from: the cli step of scripts/device-run.sh
# refuses a carry whose sources are not the tree's (a stale carry would test
# old code)
scripts/source-stamp.sh >.carry/SOURCE
du -sh .carry

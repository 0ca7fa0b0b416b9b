"""libaurorapack through ctypes: loading and the C declarations (aurp.h,
aurorapack.h).  ctypes releases the GIL during every call, so frames decode
in parallel from threads."""
from __future__ import annotations

import ctypes
import os
from pathlib import Path

SONAME = "libaurorapack.so.1"

# aurp_status (aurp.h)
OK, ERR_PARAM, ERR_NOMEM, ERR_CAPACITY, ERR_CORRUPT, ERR_CHECKSUM, ERR_VERSION, ERR_BACKEND, \
    ERR_LIMIT = range(9)
DEFAULT_MAX_OUTPUT = 4 << 30  # AURP_DEFAULT_MAX_OUTPUT
CHUNK_METHODS = {0: "stored", 1: "general", 2: "image", 3: "text"}


class Error(ctypes.Structure):
    _fields_ = [("msg", ctypes.c_char * 256)]


class Params(ctypes.Structure):
    _fields_ = [("profile", ctypes.c_int), ("order", ctypes.c_int),
                ("equations", ctypes.c_int), ("threshold", ctypes.c_int)]


class ChunkInfo(ctypes.Structure):
    _fields_ = [("method", ctypes.c_int), ("raw_len", ctypes.c_uint64),
                ("enc_len", ctypes.c_uint64), ("width", ctypes.c_uint32),
                ("height", ctypes.c_uint32), ("profile", ctypes.c_int), ("order", ctypes.c_int),
                ("equations", ctypes.c_int), ("threshold", ctypes.c_int),
                ("t_lo", ctypes.c_int32), ("t_hi", ctypes.c_int32), ("escapes", ctypes.c_uint64)]


class Info(ctypes.Structure):
    _fields_ = [("version", ctypes.c_int), ("original_size", ctypes.c_uint64),
                ("checksum", ctypes.c_uint64), ("nchunks", ctypes.c_int),
                ("chunks", ctypes.POINTER(ChunkInfo))]


class Damage(ctypes.Structure):
    _fields_ = [("header_ok", ctypes.c_int), ("checksum_ok", ctypes.c_int),
                ("truncated", ctypes.c_int), ("missing", ctypes.c_uint64),
                ("declared_chunks", ctypes.c_uint32), ("readable_raw", ctypes.c_uint64)]


class Layout(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("nimages", ctypes.c_int), ("why", ctypes.c_char * 256)]


def _load() -> ctypes.CDLL:
    tried = []
    candidates = []
    if os.environ.get("AURORAPACK_LIBRARY"):
        candidates.append(os.environ["AURORAPACK_LIBRARY"])
    bundled = Path(__file__).resolve().parent / SONAME
    if bundled.exists():
        candidates.append(str(bundled))
    candidates.append(SONAME)  # the dynamic loader's search (make install-lib)
    for name in candidates:
        try:
            return ctypes.CDLL(name)
        except OSError as e:
            tried.append(f"{name}: {e}")
    raise ImportError("aurorapack: cannot load libaurorapack (build it with `make lib`, install it "
                      "with `make install-lib`, or set AURORAPACK_LIBRARY): " + "; ".join(tried))


lib = _load()
_u8p = ctypes.c_char_p  # const uint8_t *: bytes are passed without a copy
_sz = ctypes.c_size_t
_u64 = ctypes.c_uint64


def _decl(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


aurp_status_name = _decl("aurp_status_name", ctypes.c_char_p, ctypes.c_int)
aurp_params_default = _decl("aurp_params_default", None, ctypes.POINTER(Params))
aurp_check_stream = _decl("aurp_check_stream", ctypes.c_int, _u8p, _sz, _u64,
                          ctypes.POINTER(_u64), ctypes.POINTER(Error))
aurp_unpack = _decl("aurp_unpack", ctypes.c_int, _u8p, _sz, ctypes.c_int, ctypes.c_void_p, _sz,
                    ctypes.POINTER(_sz), ctypes.POINTER(Error))
aurp_unpack_chunks = _decl("aurp_unpack_chunks", ctypes.c_int, _u8p, _sz, ctypes.c_int, _u64,
                           ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(_u64),
                           ctypes.POINTER(Error))
aurp_inspect_partial = _decl("aurp_inspect_partial", ctypes.c_int, _u8p, _sz,
                             ctypes.POINTER(Info), ctypes.POINTER(Damage), ctypes.POINTER(Error))
aurp_info_free = _decl("aurp_info_free", None, ctypes.POINTER(Info))
aurp_params_for_profile = _decl("aurp_params_for_profile", ctypes.c_int, ctypes.POINTER(Params),
                                ctypes.c_int)
aurp_profile_name = _decl("aurp_profile_name", ctypes.c_char_p, ctypes.c_int)
aurp_profile_from_name = _decl("aurp_profile_from_name", ctypes.c_int, ctypes.c_char_p)
aurorapack_version = _decl("aurorapack_version", ctypes.c_char_p)
aurorapack_pack = _decl("aurorapack_pack", ctypes.c_int, _u8p, _sz, ctypes.POINTER(Params),
                        ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p),
                        ctypes.POINTER(_sz), ctypes.POINTER(Layout), ctypes.POINTER(Error))
aurorapack_free = _decl("aurorapack_free", None, ctypes.c_void_p)


def status_name(status: int) -> str:
    return aurp_status_name(status).decode()

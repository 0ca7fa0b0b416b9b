"""aurorapack: read, unpack, verify and pack ``.aurp`` spectrograph frames.

The ``.aurp`` format restores a FITS file byte for byte; this package calls
libaurorapack (the same C library as the ``aurorapack`` tool) through ctypes
and gives the restored frame straight to numpy and astropy, in memory::

    import aurorapack
    image = aurorapack.read("20140715_132940.fits.aurp")    # numpy array
    with aurorapack.open("20140715_132940.fits.aurp") as hdul:  # astropy HDUList
        print(hdul[0].header["DATE-OBS"])

    aurorapack.unpack("f.fits.aurp")          # writes f.fits, as `aurorapack unpack`
    aurorapack.verify("f.fits.aurp")          # the restored size, or raises
    aurorapack.info("f.fits.aurp")            # what `aurorapack info --json` says
    aurorapack.pack("f.fits")                 # writes f.fits.aurp

Every error is an :class:`AurorapackError` naming the file and the reason.
For many frames at once see :mod:`aurorapack.dask`.
"""
from __future__ import annotations

import ctypes
import io
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Union

import numpy as np

from . import _lib

if TYPE_CHECKING:  # for the annotations only: astropy stays optional at run time
    import astropy.io.fits

__all__ = ["read", "open", "unpack", "unpack_bytes", "verify", "info", "pack", "AurorapackError",
           "CorruptStreamError", "ChecksumError", "OutputLimitError", "NotFitsError",
           "DEFAULT_MAX_OUTPUT", "library_version", "__version__"]

__version__ = "1.0.0"
DEFAULT_MAX_OUTPUT: int = _lib.DEFAULT_MAX_OUTPUT
"""The largest original accepted unless ``max_output`` says otherwise (4 GiB)."""

PathLike = Union[str, "os.PathLike[str]"]
EXTENSION = ".aurp"


class AurorapackError(OSError):
    """A file could not be read, unpacked, verified or packed.

    ``path`` is the file, ``reason`` what went wrong and ``status`` the
    library's status name (``"corrupt stream"``, ``"checksum mismatch"``,
    ...); ``str()`` gives ``"PATH: reason"``.
    """

    def __init__(self, path: Optional[PathLike], reason: str, status: str = "error"):
        self.path = None if path is None else os.fspath(path)
        self.reason = reason
        self.status = status
        super().__init__(f"{self.path}: {reason}" if self.path is not None else reason)

    def __reduce__(self):
        # pickled whole (dask.distributed sends a task's exception back to
        # the client): OSError's default would call __init__ with the message only
        return (self.__class__, (self.path, self.reason, self.status), self.__dict__)


class CorruptStreamError(AurorapackError):
    """The stream is damaged, truncated or not an ``.aurp`` stream."""


class ChecksumError(AurorapackError):
    """The restored bytes do not match the checksum the stream carries."""


class OutputLimitError(AurorapackError):
    """The stream declares more output than ``max_output`` allows."""


class NotFitsError(AurorapackError):
    """``pack`` was given a file that is not FITS (use ``any=True``)."""


_ERRORS = {_lib.ERR_CORRUPT: CorruptStreamError, _lib.ERR_VERSION: CorruptStreamError,
           _lib.ERR_CHECKSUM: ChecksumError, _lib.ERR_LIMIT: OutputLimitError}


def _raise(path: Optional[PathLike], status: int, err: _lib.Error, what: str = "") -> None:
    reason = err.msg.decode(errors="replace")
    name = _lib.status_name(status)
    cls = _ERRORS.get(status, AurorapackError)
    raise cls(path, f"{what}{name}: {reason}" if reason else f"{what}{name}", name)


def _threads(threads: Optional[int]) -> int:
    return max(1, threads if threads is not None else (os.cpu_count() or 1))


def library_version() -> str:
    """The version of the loaded libaurorapack, e.g. ``"1.0.0"``."""
    return _lib.aurorapack_version().decode()


def _read_bytes(path: PathLike) -> bytes:
    try:
        with io.open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise AurorapackError(path, f"cannot read: {e.strerror or e}", "error") from None


def unpack_bytes(data: bytes, *, path: Optional[PathLike] = None, threads: Optional[int] = None,
                 max_output: int = DEFAULT_MAX_OUTPUT) -> bytearray:
    """Restores the original bytes of an ``.aurp`` stream held in memory.

    Size and XXH3-64 checksum are verified.  ``max_output`` bounds the
    restored size: a stream that declares more raises
    :class:`OutputLimitError` before anything is allocated.  ``path`` only
    names the stream in errors.
    """
    data = bytes(data) if not isinstance(data, bytes) else data
    err = _lib.Error()
    size = ctypes.c_uint64(0)
    st = _lib.aurp_check_stream(data, len(data), max_output, ctypes.byref(size), ctypes.byref(err))
    if st != _lib.OK:
        _raise(path, st, err)
    out = bytearray(size.value)
    # the library decodes straight into the bytearray: no copy afterwards
    buf = (ctypes.c_char * max(1, size.value)).from_buffer(out) if size.value else ctypes.create_string_buffer(1)
    n = ctypes.c_size_t(0)
    st = _lib.aurp_unpack(data, len(data), _threads(threads), ctypes.addressof(buf), size.value,
                          ctypes.byref(n), ctypes.byref(err))
    del buf  # releases the export of out's buffer
    if st != _lib.OK:
        _raise(path, st, err)
    return out


def _restore(path: PathLike, threads: Optional[int], max_output: int) -> bytearray:
    return unpack_bytes(_read_bytes(path), path=path, threads=threads, max_output=max_output)


def open(path: PathLike, *, threads: Optional[int] = None,
         max_output: int = DEFAULT_MAX_OUTPUT) -> "astropy.io.fits.HDUList":
    """Opens an ``.aurp`` file as an in-memory :class:`astropy.io.fits.HDUList`.

    The HDUList equals what ``astropy.io.fits.open`` gives for the restored
    file, with no temporary file: the frame is decoded into memory and
    parsed from there.  Use it as a context manager or close it.
    """
    from astropy.io import fits

    data = _restore(path, threads, max_output)
    try:
        hdul = fits.HDUList.fromstring(bytes(data))
        hdul.readall()  # everything in memory: nothing refers back to a file
    except Exception as e:  # astropy raises OSError, ValueError, ... on bad FITS
        raise AurorapackError(path, f"restored bytes are not a FITS file astropy reads: {e}",
                              "not FITS") from None
    return hdul


def read(path: PathLike, *, threads: Optional[int] = None,
         max_output: int = DEFAULT_MAX_OUTPUT) -> np.ndarray:
    """The first image of an ``.aurp`` FITS file as a numpy array.

    The values are those astropy gives (``astropy.io.fits.getdata`` of the
    restored file): BZERO/BSCALE applied, so a BITPIX = 16, BZERO = 32768
    frame comes back as ``uint16``.  The first HDU with data that is an
    image (primary or IMAGE extension) is taken.
    """
    with open(path, threads=threads, max_output=max_output) as hdul:
        for hdu in hdul:
            if hdu.is_image and hdu.data is not None:
                return np.array(hdu.data)  # owns its memory: the HDUList can go
    raise AurorapackError(path, "no image in the file", "no image")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_umask()  # read once: os.umask is process-wide


def _write_atomic(path: Path, data: bytes, force: bool, source: PathLike) -> None:
    """A temporary file beside path, fsync, then linked (or with force,
    renamed) into place: the output is complete or absent."""
    if not force and os.path.lexists(path):
        raise AurorapackError(source, f"{path} already exists (use force=True)", "exists")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with io.open(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), _FILE_MODE)
            os.fsync(f.fileno())
        if force:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise AurorapackError(source, f"{path} already exists (use force=True)", "exists") from None
            os.unlink(tmp)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise


def unpack(path: PathLike, out: Optional[PathLike] = None, *, force: bool = False,
           threads: Optional[int] = None, max_output: int = DEFAULT_MAX_OUTPUT) -> Path:
    """Restores ``FILE`` from ``FILE.aurp`` (or to ``out``), as ``aurorapack unpack``.

    The checksum is verified before anything is written; the output is
    written atomically and an existing file is replaced only with
    ``force=True``.  Returns the path written.
    """
    src = Path(path)
    if out is None:
        if not src.name.endswith(EXTENSION) or src.name == EXTENSION:
            raise AurorapackError(path, f"name does not end in {EXTENSION} (give out=)", "usage")
        dest = src.with_name(src.name[:-len(EXTENSION)])
    else:
        dest = Path(out)
    data = _restore(path, threads, max_output)
    _write_atomic(dest, data, force, path)
    return dest


def verify(path: PathLike, *, threads: Optional[int] = None,
           max_output: int = DEFAULT_MAX_OUTPUT) -> int:
    """Decodes and checks a file without keeping the output, as ``aurorapack verify``.

    Returns the number of bytes restored; raises :class:`CorruptStreamError`,
    :class:`ChecksumError` or :class:`OutputLimitError` when it is not intact.
    """
    data = _read_bytes(path)
    err = _lib.Error()
    restored = ctypes.c_uint64(0)
    st = _lib.aurp_unpack_chunks(data, len(data), _threads(threads), max_output, None, None,
                                 ctypes.byref(restored), ctypes.byref(err))
    if st != _lib.OK:
        _raise(path, st, err)
    return restored.value


def info(path: PathLike) -> Dict[str, Any]:
    """What ``aurorapack info --json`` says about one file, as a dict.

    Keys: ``file``, ``format``, ``original_size``, ``packed_size``,
    ``checksum`` (hex), ``coding`` (``"image"`` or ``"general"``) and
    ``chunks`` (``method``, ``raw_len``, ``enc_len``; for images ``width``,
    ``height``, ``profile``, ``N``, ``M``, ``T``, ``t_lo``, ``t_hi``,
    ``escapes``, ``bpp``).  A damaged file raises
    :class:`CorruptStreamError`; its ``details`` attribute holds what could
    still be read (``truncated``, ``missing_bytes``, the readable chunks).
    """
    data = _read_bytes(path)
    inf, dmg, err = _lib.Info(), _lib.Damage(), _lib.Error()
    st = _lib.aurp_inspect_partial(data, len(data), ctypes.byref(inf), ctypes.byref(dmg),
                                   ctypes.byref(err))
    try:
        chunks: List[Dict[str, Any]] = []
        for i in range(inf.nchunks):
            c = inf.chunks[i]
            d: Dict[str, Any] = {"method": _lib.CHUNK_METHODS.get(c.method, str(c.method)),
                                 "raw_len": c.raw_len, "enc_len": c.enc_len}
            if c.method == 2:
                px = c.width * c.height
                d.update(width=c.width, height=c.height,
                         profile=(_lib.aurp_profile_name(c.profile) or str(c.profile).encode()).decode(),
                         N=c.order,
                         M=c.equations, T=c.threshold, t_lo=c.t_lo, t_hi=c.t_hi,
                         escapes=c.escapes, bpp=round(8.0 * c.enc_len / px, 4) if px else 0.0)
            chunks.append(d)
        result: Dict[str, Any] = {
            "file": os.fspath(path), "format": inf.version, "original_size": inf.original_size,
            "packed_size": len(data), "checksum": f"{inf.checksum:016x}",
            "coding": "image" if any(c["method"] == "image" for c in chunks) else "general",
            "chunks": chunks}
    finally:
        _lib.aurp_info_free(ctypes.byref(inf))
    if st != _lib.OK:
        reason = err.msg.decode(errors="replace")
        e = CorruptStreamError(path, reason, _lib.status_name(st))
        e.details = dict(result, truncated=bool(dmg.truncated), header_ok=bool(dmg.header_ok),
                         checksum_ok=bool(dmg.checksum_ok), missing_bytes=dmg.missing,
                         declared_chunks=dmg.declared_chunks, readable_bytes=dmg.readable_raw)
        raise e
    return result


def pack(path: PathLike, out: Optional[PathLike] = None, *, order: Optional[int] = None,
         equations: Optional[int] = None, threshold: Optional[int] = None,
         profile: Optional[str] = None, threads: Optional[int] = None,
         any: bool = False, force: bool = False) -> Path:
    """Packs a FITS file into ``FILE.aurp`` (or ``out``), as ``aurorapack pack``.

    ``profile`` is a profile name as ``--profile`` takes (None: the
    library's default profile); ``order`` (N), ``equations`` (M) and
    ``threshold`` (T) override that profile's defaults, as -N -M -T.  A file that is not FITS
    raises :class:`NotFitsError` unless ``any=True``, which packs it with
    the general-purpose coder.  Returns the path written.
    """
    src = Path(path)
    dest = Path(out) if out is not None else src.with_name(src.name + EXTENSION)
    data = _read_bytes(path)
    params = _lib.Params()
    _lib.aurp_params_default(ctypes.byref(params))
    if profile is not None:
        pid = _lib.aurp_profile_from_name(profile.encode())
        if not pid or _lib.aurp_params_for_profile(ctypes.byref(params), pid) != 0:
            raise AurorapackError(path, f"unknown profile {profile!r}", "bad parameter")
    for name, value in (("order", order), ("equations", equations), ("threshold", threshold)):
        if value is not None:
            setattr(params, name, value)
    outp, outlen = ctypes.c_void_p(), ctypes.c_size_t(0)
    layout, err = _lib.Layout(), _lib.Error()
    st = _lib.aurorapack_pack(data, len(data), ctypes.byref(params), _threads(threads), int(any),
                              ctypes.byref(outp), ctypes.byref(outlen), ctypes.byref(layout),
                              ctypes.byref(err))
    if st != _lib.OK:
        if layout.kind == 2 and not any and st == _lib.ERR_PARAM:
            raise NotFitsError(path, err.msg.decode(errors="replace") + " (use any=True)", "not FITS")
        _raise(path, st, err)
    try:
        packed = ctypes.string_at(outp, outlen.value)
    finally:
        _lib.aurorapack_free(outp)
    _write_atomic(dest, packed, force, path)
    return dest

"""Frames as a lazy dask array, for archives bigger than one machine.

    import aurorapack.dask
    from dask.distributed import Client
    client = Client("scheduler:8786")           # or LocalCluster()
    night = aurorapack.dask.stack(sorted(paths))  # (frames, rows, columns), lazy
    mean_spectrum = night.mean(axis=(0, 1)).compute()   # per column (wavelength)

Each frame is decoded in its own task (where the file is, on the worker
that runs it), so the decoding spreads over every worker of the cluster.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Iterable, Optional, Sequence, Tuple, Union

import numpy as np

import aurorapack

if TYPE_CHECKING:  # for the annotations only
    import dask.array

__all__ = ["stack"]


def _read_frame(path: str, shape: Tuple[int, ...], dtype: str, threads: int,
                max_output: int) -> np.ndarray:
    """One task: one frame, checked against the stack's shape and dtype."""
    frame = aurorapack.read(path, threads=threads, max_output=max_output)
    if frame.shape != tuple(shape) or frame.dtype != np.dtype(dtype):
        raise aurorapack.AurorapackError(
            path, f"frame is {frame.shape} {frame.dtype}, the stack is {tuple(shape)} {dtype}",
            "shape mismatch")
    return frame


def stack(paths: Iterable[Union[str, "os.PathLike[str]"]], *, threads: int = 1,
          shape: Optional[Sequence[int]] = None, dtype: Optional[Union[str, np.dtype]] = None,
          max_output: int = aurorapack.DEFAULT_MAX_OUTPUT) -> "dask.array.Array":
    """A lazy dask array of the first image of every file, stacked on axis 0.

    Nothing is decoded when the array is made, except the first file when
    ``shape`` and ``dtype`` are not given (to learn them).  Every frame must
    have that shape and dtype; a frame that does not raises an
    :class:`aurorapack.AurorapackError` naming it when its task runs.
    ``threads``: decoder threads inside each task (1 suits one task per
    core).  Works with the threaded scheduler and with dask.distributed.
    """
    import dask
    import dask.array as da

    names = [os.fspath(p) for p in paths]
    if not names:
        raise ValueError("aurorapack.dask.stack: no files")
    if shape is None or dtype is None:
        first = aurorapack.read(names[0], threads=threads, max_output=max_output)
        shape = first.shape if shape is None else shape
        dtype = first.dtype if dtype is None else dtype
    shape = tuple(int(n) for n in shape)
    dtype = np.dtype(dtype)
    read = dask.delayed(_read_frame, pure=True)
    frames = [da.from_delayed(read(p, shape, dtype.str, threads, max_output), shape=shape,
                              dtype=dtype, name=f"aurorapack-read-{dask.base.tokenize(p, shape)}")
              for p in names]
    return da.stack(frames, axis=0)

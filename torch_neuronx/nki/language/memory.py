"""`nl` memory: the buffers a tensor lives in (`nl.sbuf`, `nl.psum`, `nl.hbm`,
`nl.shared_hbm`, `nl.private_hbm`), allocation (`nl.ndarray`, `nl.zeros`,
`nl.full`, ... and their `_like` forms) and constants (`nl.shared_constant`,
`nl.shared_identity_matrix`).

An on-chip allocation is a new tile (its partition dimension the `nl.par_dim`
of its shape, else the first); a `shared_hbm` one is a kernel output, shared by
every grid instance (each must allocate the same ones, in the same order);
other HBM is scratch. The fills are Vector-engine memsets (isa/fill.py)."""

import torch

from ..chip import dtypes
from ..isa.fill import fill
from ..trace import state
from ..trace.access import Access
from ..trace.alloc import new_buffer, new_tile, shape_and_par
from ..trace.buffers import HBM, PRIVATE_HBM, PSUM, SBUF, SHARED_HBM
from ..trace.emit import emit
from ..trace.tile import Tile

sbuf, psum, hbm, shared_hbm, private_hbm = SBUF, PSUM, HBM, SHARED_HBM, PRIVATE_HBM


def ndarray(shape, dtype, buffer=None, name="", address=None, **kwargs) -> Tile:
    """An uninitialised tensor in `buffer` (SBUF by default; an HBM buffer
    makes a kernel output or scratch tensor). `address` (a fixed on-chip
    placement, (start partition, byte offset) or a byte offset) places
    nothing here, the emulator allocates by itself, but the capacity check
    counts the placement's extent: tiles the kernel places over each other
    (a circular buffer) take their memory once."""
    tr = state.require("nl.ndarray")
    kind = buffer or SBUF
    shape, par = shape_and_par(shape)
    dtype = dtypes.to_torch(dtype)
    if kind.on_chip:
        t = new_tile(shape, dtype, kind, name or None, par_axis=par)
        if address is not None:  # the kernel's own placement: capacity counts its extent (trace/state.py)
            t.access.buffer.address = _byte_offset(address)
        return t
    if kind is SHARED_HBM:
        if any(tr.program):  # later grid instances share the first one's tensors
            if tr.shared_next >= len(tr.shared):
                raise tr.error(
                    "grid instances allocate different shared_hbm tensors; allocate the same ones in every instance"
                )
            buf = tr.shared[tr.shared_next]
            tr.shared_next += 1
            if buf.shape != shape or buf.dtype != dtype:
                raise tr.error(
                    f"grid instance {tr.program} allocates shared_hbm {list(shape)} {dtype} where the "
                    f"first instance allocated {list(buf.shape)} {buf.dtype}"
                )
            return Tile(Access.whole(buf))
        buf = new_buffer(shape, dtype, kind, name or None, role="out")
        tr.shared.append(buf)
        return Tile(Access.whole(buf))
    return Tile(Access.whole(new_buffer(shape, dtype, kind, name or None, role="scratch")))


def _byte_offset(address) -> int:
    if isinstance(address, (tuple, list)):
        return int(address[-1])
    return int(address)


def full(shape, fill_value, dtype, buffer=None, name="", **kwargs) -> Tile:
    return fill(ndarray(shape, dtype, buffer or SBUF, name), fill_value)


def zeros(shape, dtype, buffer=None, name="", **kwargs) -> Tile:
    return full(shape, 0, dtype, buffer, name)


def ones(shape, dtype, buffer=None, name="", **kwargs) -> Tile:
    return full(shape, 1, dtype, buffer, name)


def zeros_like(a, dtype=None, buffer=None, name="", **kwargs) -> Tile:
    return zeros(a.shape, dtype or a.dtype, buffer or a.buffer, name)


def ones_like(a, dtype=None, buffer=None, name="", **kwargs) -> Tile:
    return ones(a.shape, dtype or a.dtype, buffer or a.buffer, name)


def full_like(a, fill_value, dtype=None, buffer=None, name="", **kwargs) -> Tile:
    return full(a.shape, fill_value, dtype or a.dtype, buffer or a.buffer, name)


def empty_like(a, dtype=None, buffer=None, name="", **kwargs) -> Tile:
    return ndarray(a.shape, dtype or a.dtype, buffer or a.buffer, name)


def _constant(t: Tile, values: torch.Tensor) -> Tile:
    """Records `t` holding `values`. AWS loads constants with the model, before
    the kernel runs; here writing them costs an instruction (an overestimate)."""
    emit("iota", "gpsimd", lambda: values, [], dst=t, make_step=lambda rd, wr, acc: lambda env: wr[0].put(env, values))
    return t


def shared_identity_matrix(n, dtype=dtypes.uint8, dst=None, **kwargs) -> Tile:
    """An n x n identity matrix in SBUF (or written into `dst`)."""
    t = dst if dst is not None else ndarray((n, n), dtype, SBUF)
    return _constant(t, torch.eye(int(n)))


def shared_constant(constant, **kwargs) -> Tile:
    """A shared-HBM tensor holding `constant` (a NumPy array, or the path of a .npy file)."""
    import numpy as np

    array = np.load(constant) if isinstance(constant, (str, bytes)) or hasattr(constant, "__fspath__") else constant
    array = np.ascontiguousarray(array)
    dtype = dtypes.to_torch(array.dtype)
    # floats through fp32 (ml_dtypes' bf16/fp8 have no NumPy-to-torch conversion); the buffer rounds them back
    values = torch.from_numpy(array.astype(np.float32) if dtype.is_floating_point else array)
    t = Tile(Access.whole(new_buffer(tuple(array.shape), dtype, HBM, None, role="scratch")))
    return _constant(t, values)

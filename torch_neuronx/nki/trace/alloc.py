"""Allocating buffers and tiles while a kernel is traced.

`new_buffer` checks what the hardware refuses of an on-chip allocation (more
than pmax partitions, PSUM in a dtype other than fp32/bf16); `new_tile` is a
whole new buffer as a tile. `par_dim` marks the partition dimension in a
shape, as `nl.par_dim` does (`shape_and_par` finds it).
"""

from __future__ import annotations

import torch

from ..chip import dtypes
from . import state
from .access import Access
from .buffers import PSUM, SBUF, Buffer
from .tile import Tile


class par_dim(int):  # noqa: N801  (AWS's name)
    """Marks the partition dimension in a shape: nl.ndarray((4, nl.par_dim(128), 512), ...)."""


def shape_and_par(shape) -> tuple[tuple, int]:
    """(shape as ints, the index of its partition dimension: the par_dim, else 0)."""
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    par = next((i for i, s in enumerate(shape) if isinstance(s, par_dim)), 0)
    return tuple(int(s) for s in shape), par


def new_buffer(shape, dtype, kind=SBUF, name=None, role="onchip", par_axis=0) -> Buffer:
    tr = state.require("allocating a tile")
    shape = tuple(int(s) for s in shape)
    dtype = dtypes.to_torch(dtype)
    if kind.on_chip:
        if not shape:
            raise tr.error(f"an on-chip tile needs at least one dimension (the partition dimension), got {shape}")
        p = shape[par_axis]
        if p > tr.limits.pmax:
            raise tr.error(
                f"partition dimension {p} of the new {kind.name} tile {list(shape)} exceeds the "
                f"limit of {tr.limits.pmax} partitions: split it into tiles of at most "
                f"{tr.limits.pmax} rows"
            )
        if kind is PSUM and dtype not in (torch.float32, torch.bfloat16, torch.float16):
            raise tr.error(
                f"PSUM holds fp32, bf16 or fp16 only, not {str(dtype).replace('torch.', '')} "
                f"(new tile {list(shape)}); allocate it in SBUF or as nl.float32"
            )
    return Buffer(tr, kind, shape, dtype, name, role, par_axis=par_axis)


def new_tile(shape, dtype, kind=SBUF, name=None, par_axis=0) -> Tile:
    return Tile(Access.whole(new_buffer(shape, dtype, kind, name, par_axis=par_axis)))

"""Operands of an instruction: the checks and conversions `nki.language` and
`nki.isa` share before they record one (emit.py).

A tile operand must be a `Tile` (`as_tile`), engines compute on SBUF/PSUM
tiles only (`check_on_chip`) and reduce along free axes only (`free_axes`);
a lower-rank on-chip tile keeps its first axis on the partitions
(`partition_aligned`); floating-point math runs in fp32 (`f32`).
"""

from __future__ import annotations

import math

import torch

from ..errors import NKIError
from . import state
from .access import Access
from .tile import Tile

_LOW = (torch.bfloat16, torch.float16, torch.float8_e4m3fn, torch.float8_e5m2)


def f32(x):
    """A tensor in the precision the engines compute in."""
    if isinstance(x, torch.Tensor) and x.dtype in _LOW:
        return x.float()
    return x


def fp32_scalar(v) -> float:
    """A float immediate as the engines hold it: rounded to fp32, IEEE's way
    (AWS's kernels write fp32's lowest as -3.4028235e38, a double just past
    it that rounds to it; one past half an ulp more becomes -inf)."""
    return float(torch.tensor(float(v), dtype=torch.float64).to(torch.float32))


def is_scalar(x) -> bool:
    return isinstance(x, (int, float, bool)) or (
        hasattr(x, "item") and not isinstance(x, (Tile, torch.Tensor)) and getattr(x, "ndim", 0) == 0
    )


def dma_cost(src, dst=None) -> dict:
    """The cost record of a DMA moving src (to dst): its bytes at the wider of the two dtypes."""
    return {"bytes": math.prod(src.shape) * max(src.dtype.itemsize, (src if dst is None else dst).dtype.itemsize)}


def as_tile(x, what="operand") -> Tile:
    if isinstance(x, Tile):
        return x
    raise NKIError(f"{what} must be a tile (an NKI tensor), got {type(x).__name__} {x!r}")


def partition_aligned(t: Tile, rank: int) -> Tile:
    """A lower-rank on-chip tile combined with a rank-`rank` one keeps its
    first axis on the partitions: (P,) acts as (P, 1), as a reduction's result
    does in AWS's kernels (NumPy would align it with the last axis)."""
    if not (1 <= t.ndim < rank) or not t.access.buffer.kind.on_chip:
        return t
    k = rank - t.ndim
    acc = t.access
    arrays = [a.reshape(tuple(a.shape) + (1,) * k) if a.dim() == t.ndim else a for a in acc.arrays]
    out = Tile(Access(acc.buffer, arrays, tuple(acc.shape) + (1,) * k, acc.mask))
    out.producer, out.used = t.producer, t.used
    return out


def check_on_chip(t: Tile, what: str):
    if not t.access.buffer.kind.on_chip:
        tr = state.require(what)
        raise tr.error(
            f"{what}: {t.access.buffer.describe()} is in HBM; engines compute on SBUF/PSUM tiles: nl.load it first"
        )


def free_axes(x: Tile, axis, name) -> list:
    """The axes `axis` (an int or a sequence) of x, sorted and non-negative;
    the partition axis (0) cannot be reduced by the engines."""
    axes = [axis] if isinstance(axis, int) else list(axis)
    axes = [a % x.ndim for a in axes]
    if 0 in axes:
        tr = state.require(f"nl.{name}")
        raise tr.error(
            f"nl.{name}: reducing along the partition axis (axis 0) of {list(x.shape)} is not "
            f"supported by the engines; transpose the tile (nl.transpose) or reduce with a matmul"
        )
    return sorted(axes)

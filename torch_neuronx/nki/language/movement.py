"""`nl` data movement: `load` and `store` (DMA between HBM and SBUF),
`load_transpose2d`, `copy` (on chip) and `broadcast_to`."""

import torch

from ..chip import dtypes
from ..trace import state
from ..trace.buffers import HBMS, PSUM, SBUF
from ..trace.emit import emit
from ..trace.operands import as_tile, check_on_chip, dma_cost, is_scalar, partition_aligned
from ..trace.tile import Tile


def _require_kind(t: Tile, kinds, what, role):
    if t.access.buffer.kind not in kinds:
        tr = state.require(what)
        names = " or ".join(k.name.upper() for k in kinds)
        raise tr.error(
            f"{what}: the {role} must be in {names}, but {t.access.buffer.describe()} is in "
            f"{t.access.buffer.kind.name.upper()} (loads and stores move data between HBM and SBUF only)"
        )


def load(src, mask=None, dtype=None, **kwargs) -> Tile:
    src = as_tile(src, "nl.load source")
    _require_kind(src, HBMS, "nl.load", "source")
    out_dtype = dtypes.to_torch(dtype) if dtype is not None else src.dtype
    return emit("load", "dma", lambda x: x, [src], dtype=out_dtype, mask=mask, cost=dma_cost(src))


def store(dst, value, mask=None, **kwargs):
    dst = as_tile(dst, "nl.store destination")
    _require_kind(dst, HBMS, "nl.store", "destination")
    if is_scalar(value):
        raise state.require("nl.store").error("nl.store stores a tile, not a scalar: fill an SBUF tile first")
    value = as_tile(value, "nl.store value")
    _require_kind(value, (SBUF, PSUM), "nl.store", "value")
    if value.access.buffer.kind is PSUM:  # DMA cannot read PSUM: the compiler copies to SBUF first
        value = copy(value)
    emit("store", "dma", lambda x: x, [value], dst=dst, mask=mask, cost=dma_cost(value, dst))


def load_transpose2d(src, mask=None, dtype=None, **kwargs) -> Tile:
    src = as_tile(src, "nl.load_transpose2d source")
    _require_kind(src, HBMS, "nl.load_transpose2d", "source")
    if src.ndim != 2:
        raise state.require("nl.load_transpose2d").error(
            f"nl.load_transpose2d takes a 2-D tensor, got shape {list(src.shape)}"
        )
    out_dtype = dtypes.to_torch(dtype) if dtype is not None else src.dtype
    return emit(
        "load_transpose2d",
        "dma",
        lambda x: x,
        [Tile(src.access.transposed())],
        dtype=out_dtype,
        mask=mask,
        cost=dma_cost(src),
    )


def copy(src, mask=None, dtype=None, **kwargs) -> Tile:
    src = as_tile(src, "nl.copy source")
    check_on_chip(src, "nl.copy")
    out_dtype = dtypes.to_torch(dtype) if dtype is not None else src.dtype
    return emit("copy", "vector", lambda x: x, [src], dtype=out_dtype, mask=mask)


def broadcast_to(src, shape, **kwargs) -> Tile:
    src = as_tile(src, "broadcast_to source")
    shape = tuple(int(s) for s in shape)
    src = partition_aligned(src, len(shape))
    try:
        torch.broadcast_shapes(src.shape, shape)
    except RuntimeError:
        raise state.require("broadcast_to").error(f"cannot broadcast {list(src.shape)} to {list(shape)}") from None
    return emit("broadcast_to", "vector", lambda x: x, [src], shape=shape, dtype=src.dtype)

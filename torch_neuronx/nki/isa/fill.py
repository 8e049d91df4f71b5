"""Filling a tile with one value: `nisa.memset`, and `fill`, the memset
instruction that `nl.zeros`/`nl.full` and `tile[...] = scalar` record too."""

from __future__ import annotations

import torch

from ..trace.alloc import new_tile, shape_and_par
from ..trace.buffers import SBUF
from ..trace.emit import emit
from ..trace.operands import as_tile, fp32_scalar
from ..trace.tile import Tile
from .calls import REQ, split
from .enums import engine


def fill(t: Tile, value) -> Tile:
    """Records `t[...] = value` (a scalar) on the Vector engine; returns t."""
    if isinstance(value, float):
        value = fp32_scalar(value)
    emit(
        "memset",
        "vector",
        lambda: torch.tensor(value),
        [],
        dst=t,
        make_step=lambda rd, wr, acc: lambda env: wr[0].put(env, value),
    )
    return t


def memset(*args, **kwargs):
    if args and isinstance(args[0], Tile) or "dst" in kwargs:
        d = split(args, kwargs, {"dst": REQ, "value": REQ, "engine": engine.unknown})
        return fill(as_tile(d["dst"]), d["value"])
    d = split(args, kwargs, {"shape": REQ, "value": REQ, "dtype": REQ, "mask": None, "engine": engine.unknown})
    shape, par = shape_and_par(d["shape"])
    t = new_tile(shape, d["dtype"], SBUF)
    return fill(t, d["value"])

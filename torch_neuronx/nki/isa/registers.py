"""The engines' scalar registers: `nisa.register_alloc`, `register_move`,
`register_load` and `register_store`. A register (trace/dynamic.py's
`VirtualRegister`) is a one-value int32 SBUF tile here, so these are copies
of one element; registers bound dynamic loops (`while reg:`,
`nl.dynamic_range(start, reg)`) and give run-time offsets
(`tensor.ap(scalar_offset=reg)`)."""

from __future__ import annotations

import math

import torch

from ..trace import state
from ..trace.dynamic import VirtualRegister, new_register
from ..trace.emit import emit
from ..trace.operands import as_tile
from ..trace.tile import Tile
from .calls import REQ, need, split
from .fill import fill


def _one_value(tr, t: Tile, name: str) -> Tile:
    if math.prod(t.shape) != 1:
        raise tr.error(
            f"nisa.{name}: a register holds one 32-bit value, so the tensor must hold one, not {list(t.shape)}"
        )
    return t


def _copy_into(name: str, dst: Tile, src: Tile):
    emit(name, "gpsimd", lambda a: a.reshape(dst.shape).to(torch.int32), [src], dst=dst, keep_src_shapes=True)


def register_alloc(x=None) -> VirtualRegister:
    """A new register: uninitialised, or holding the int x or the one value of the tensor x."""
    tr = state.require("nisa.register_alloc")
    reg = new_register()
    if isinstance(x, Tile):
        _copy_into("register_load", reg, _one_value(tr, x, "register_alloc"))
    elif x is not None:
        fill(reg, int(x))
    return reg


def _register(tr, r, name: str) -> VirtualRegister:
    if not isinstance(r, VirtualRegister):
        raise tr.error(f"nisa.{name}: expected a register from nisa.register_alloc(), got {type(r).__name__}")
    return r


def register_move(*args, **kwargs):
    """dst = imm (an int) or the value of another register."""
    d = split(args, kwargs, {"dst": REQ, "imm": None, "src": None})
    need(d, "dst")
    tr = state.require("nisa.register_move")
    dst = _register(tr, d["dst"], "register_move")
    value = d["imm"] if d["imm"] is not None else d["src"]
    if isinstance(value, Tile):
        _copy_into("register_move", dst, _register(tr, value, "register_move"))
    else:
        fill(dst, int(value))


def register_load(*args, **kwargs):
    """dst (a register) = the one value of src (an SBUF or HBM tensor)."""
    d = split(args, kwargs, {"dst": REQ, "src": REQ})
    need(d, "dst", "src")
    tr = state.require("nisa.register_load")
    _copy_into(
        "register_load", _register(tr, d["dst"], "register_load"), _one_value(tr, as_tile(d["src"]), "register_load")
    )


def register_store(*args, **kwargs):
    """dst (a one-value tensor) = the register src."""
    d = split(args, kwargs, {"dst": REQ, "src": REQ})
    need(d, "dst", "src")
    tr = state.require("nisa.register_store")
    dst = _one_value(tr, as_tile(d["dst"]), "register_store")
    src = _register(tr, d["src"], "register_store")
    emit(
        "register_store",
        "gpsimd",
        lambda a: a.reshape(dst.shape).to(dst.access.buffer.dtype),
        [src],
        dst=dst,
        keep_src_shapes=True,
    )

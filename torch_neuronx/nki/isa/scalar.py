"""nki.isa activation instructions: the Scalar engine's `activation` and
`activation_reduce`, op(data * scale + bias) with an optional sum along the
free axes (both call styles, see calls.py), and Trainium3's `exponential`
on the Vector engine, exp(src - max_value) with an optional running sum."""

from __future__ import annotations

import torch

from ..errors import NKIUnsupported
from ..trace import state
from ..trace.emit import emit
from ..trace.operands import as_tile, f32
from ..trace.tile import Tile
from .calls import REQ, need, new_style, out_dtype, split
from .enums import reduce_cmd
from .fill import fill
from .ops import REDUCE, name_of, unary_fn


def activation(*args, **kwargs):
    """op(data * scale + bias), with an optional sum along the free axes into reduce_res."""
    new = new_style(args, kwargs, False)
    if new:
        d = split(
            args,
            kwargs,
            {
                "dst": REQ,
                "op": REQ,
                "data": REQ,
                "bias": None,
                "scale": 1.0,
                "reduce_op": None,
                "reduce_res": None,
                "reduce_cmd": reduce_cmd.idle,
            },
        )
    else:
        d = split(
            args,
            kwargs,
            {
                "op": REQ,
                "data": REQ,
                "bias": None,
                "scale": 1.0,
                "reduce_op": None,
                "reduce_res": None,
                "reduce_cmd": reduce_cmd.idle,
                "mask": None,
                "dtype": None,
            },
        )
    return _activation(d, d.get("reduce_cmd", reduce_cmd.idle))


def activation_reduce(*args, **kwargs):
    new = new_style(args, kwargs, False)
    if new:
        d = split(
            args,
            kwargs,
            {"dst": REQ, "op": REQ, "data": REQ, "reduce_op": REQ, "reduce_res": REQ, "bias": None, "scale": 1.0},
        )
    else:
        d = split(
            args,
            kwargs,
            {
                "op": REQ,
                "data": REQ,
                "reduce_op": REQ,
                "reduce_res": REQ,
                "bias": None,
                "scale": 1.0,
                "mask": None,
                "dtype": None,
            },
        )
    return _activation(d, reduce_cmd.reset_reduce)


def _activation(d, cmd):
    need(d, "op", "data")
    data = as_tile(d["data"], "activation data")
    fn = unary_fn(d["op"], "activation")
    scale, bias = d.get("scale", 1.0), d.get("bias")
    srcs = [data] + ([scale] if isinstance(scale, Tile) else []) + ([bias] if isinstance(bias, Tile) else [])
    s_tile, b_tile = isinstance(scale, Tile), isinstance(bias, Tile)

    def compute(a, *rest):
        rest = list(rest)
        s = rest.pop(0) if s_tile else scale
        b = rest.pop(0) if b_tile else bias
        x = f32(a)
        if not (isinstance(s, (int, float)) and s == 1.0):
            x = x * (f32(s) if isinstance(s, torch.Tensor) else float(s))
        if b is not None:
            x = x + (f32(b) if isinstance(b, torch.Tensor) else float(b))
        return fn(x)

    out = emit(
        "activation",
        "scalar",
        compute,
        srcs,
        dst=d.get("dst"),
        shape=data.shape,
        dtype=out_dtype(d, data),
        mask=d.get("mask"),
    )
    res = d.get("reduce_res")
    if res is not None and cmd in (reduce_cmd.reduce, reduce_cmd.reset_reduce):
        if d.get("reduce_op") not in (None,) and REDUCE.get(name_of(d["reduce_op"])) != "sum":
            raise NKIUnsupported(f"activation reduce_op {d['reduce_op']!r}: only nl.add is supported")
        # the sum of the fp32 results, as the engine adds them before rounding: computed again from the
        # sources, not read back from dst (which may be a broadcast view, AWS's kernels discard it so)
        axes = list(range(1, data.ndim))
        emit(
            "activation_reduce",
            "scalar",
            lambda *vals: compute(*vals).sum(dim=axes, keepdim=True).reshape((data.shape[0],) + tuple(res.shape[1:])),
            srcs,
            dst=res,
            accumulate=cmd == reduce_cmd.reduce,
            keep_src_shapes=True,
        )
    elif res is not None and cmd == reduce_cmd.reset:
        fill(res, 0.0)
    return out


def exponential(*args, **kwargs):
    """dst = exp(src - max_value) in fp32 (NeuronCore-v4 and newer), with the
    sum along the free axes into reduce_res when reduce_cmd says so."""
    d = split(
        args,
        kwargs,
        {
            "dst": REQ,
            "src": REQ,
            "max_value": 0.0,
            "reduce_res": None,
            "reduce_cmd": reduce_cmd.idle,
            "reduce_init": 0.0,
        },
    )
    need(d, "dst", "src")
    tr = state.require("nisa.exponential")
    if tr.target != "trn3":
        raise tr.error(
            f"nisa.exponential is available only on NeuronCore-v4 and newer (Trainium3); this kernel is traced for "
            f"{tr.target}: use nisa.activation(op=nl.exp, bias=...) or platform_target='trn3'"
        )
    src, m = as_tile(d["src"], "exponential src"), d["max_value"]
    srcs = [src] + ([m] if isinstance(m, Tile) else [])

    def compute(x, *rest):
        sub = f32(rest[0]).float() if rest else float(m)
        return torch.exp(f32(x).float() - sub)

    out = emit("exponential", "vector", compute, srcs, dst=d["dst"], shape=src.shape)
    cmd, res = d["reduce_cmd"], d["reduce_res"]
    if res is not None and cmd in (reduce_cmd.reduce, reduce_cmd.reset_reduce):
        axes = list(range(1, src.ndim))  # of the fp32 results, computed again from the sources (as activation's)
        emit(
            "exponential_reduce",
            "vector",
            lambda *vals: compute(*vals).sum(dim=axes, keepdim=True).reshape((src.shape[0],) + tuple(res.shape[1:])),
            srcs,
            dst=res,
            accumulate=cmd == reduce_cmd.reduce,
            keep_src_shapes=True,
        )
    return out

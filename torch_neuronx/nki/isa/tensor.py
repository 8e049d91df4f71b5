"""nki.isa Tensor-engine instructions: `nc_matmul` and `nc_transpose`, and the
matmul instruction `nl.matmul` shares (`matmul_instruction`): contraction on
the partition axis, results in fp32 PSUM, the matmul limits checked."""

from __future__ import annotations

import math

import torch

from ..chip import dtypes
from ..trace import state, views
from ..trace.buffers import PSUM, SBUF
from ..trace.emit import emit, mask_box
from ..trace.indexing import IndexExpr
from ..trace.operands import as_tile, check_on_chip
from ..trace.tile import Tile
from .calls import REQ, need, new_style, split, trainium3_only
from .enums import engine, engine_name, matmul_perf_mode


def _check_matmul(tr, stationary_free, moving_free, k_stat, k_mov, what):
    lim = tr.limits
    if k_stat != k_mov:
        raise tr.error(
            f"{what}: the contraction dimension must be the partition axis of both operands, but "
            f"the stationary operand has {k_stat} partitions and the moving one {k_mov}"
        )
    if k_stat > lim.pmax:
        raise tr.error(f"{what}: contraction (partition) size {k_stat} exceeds {lim.pmax}")
    if stationary_free > lim.gemm_stationary_fmax:
        raise tr.error(
            f"{what}: stationary free size {stationary_free} exceeds the limit of "
            f"{lim.gemm_stationary_fmax} (tile the M dimension by nl.tile_size.gemm_stationary_fmax)"
        )
    if moving_free > lim.gemm_moving_fmax:
        raise tr.error(
            f"{what}: moving free size {moving_free} exceeds the limit of {lim.gemm_moving_fmax} "
            f"(tile the N dimension by nl.tile_size.gemm_moving_fmax)"
        )


def matmul_step(rd, wr, accumulate):
    """Runtime step of `dst (+)= stationary.T @ moving`, accumulated in fp32."""
    a_op, b_op = rd[0], rd[1]
    out = wr[0]

    def run(env):
        a = a_op.fp32(env, a_op.get(env))
        b = b_op.fp32(env, b_op.get(env))
        view = out.const
        if view is not None and view.dtype == torch.float32:
            if accumulate:
                view.addmm_(a.t(), b)
            else:
                torch.mm(a.t(), b, out=view)
            return
        r = a.t() @ b
        (out.acc if accumulate else out.put)(env, r)

    return run


def matmul_instruction(stationary, moving, name, kind=PSUM, dst=None, mask=None):
    """Records `dst (+)= stationary.T @ moving` on the Tensor engine (nl.matmul and
    nisa.nc_matmul), the matmul limits checked; the result is an fp32 PSUM tile."""
    tr = state.require(name)
    # operands with several free dimensions: the engine reads each partition's elements in order
    stationary, moving = (views.flatten_dims(t, 1, t.ndim - 1) if t.ndim > 2 else t for t in (stationary, moving))
    if dst is not None and dst.ndim > 2 and stationary.ndim == 2 and moving.ndim == 2:
        dst = views.flatten_dims(dst, 1, dst.ndim - 1)
    if stationary.ndim != 2 or moving.ndim != 2:
        raise tr.error(f"{name}: operands must be 2-D tiles, got {list(stationary.shape)} and {list(moving.shape)}")
    for t in (stationary, moving):
        check_on_chip(t, name)
        if t.access.buffer.kind is PSUM:
            raise tr.error(
                f"{name}: matmul operands are read from SBUF, but {t.access.buffer.describe()} is in "
                f"PSUM; copy it to SBUF first"
            )
    k, m = stationary.shape
    k2, n = moving.shape
    _check_matmul(tr, m, n, k, k2, name)
    shape = (m, n)
    if mask is not None:  # a mask on the result narrows the operands' free axes with it
        stationary, moving = _masked_operands(tr, name, stationary, moving, mask, shape)
        m, n = stationary.shape[1], moving.shape[1]
    if dst is not None and dst.access.buffer.kind is not PSUM:
        raise tr.error(
            f"{name}: matmul results accumulate in PSUM, but the destination "
            f"{dst.access.buffer.describe()} is in {dst.access.buffer.kind.name.upper()}"
        )
    return emit(
        name,
        "tensor",
        None,
        [stationary, moving],
        dst=dst,
        shape=shape,
        dtype=torch.float32,
        kind=kind,
        make_step=matmul_step,
        mask=mask,
        keep_src_shapes=True,
        poison_rule=_matmul_poison,
        cost={"k": k, "m": m, "n": n, "in_dtype": stationary.dtype},
    )


def _masked_operands(tr, name, stationary, moving, mask, shape):
    """The operands' columns a rectangular mask on the [M, N] result keeps:
    stationary's by the mask's rows, moving's by its columns."""
    m = mask.t if isinstance(mask, IndexExpr) else torch.as_tensor(mask)
    try:
        box, rect = mask_box(m.bool(), shape)
    except RuntimeError:
        raise tr.error(f"{name}: mask of shape {list(m.shape)} does not fit the result {list(shape)}") from None
    if box is None:  # nothing selected: emit records nothing
        return stationary, moving
    if not rect:
        raise tr.error(f"{name}: a mask on a matmul must select a rectangle of the result")
    k = stationary.shape[0]
    return (
        Tile(stationary.access.restrict([slice(0, k), box[0]])),
        Tile(moving.access.restrict([slice(0, k), box[1]])),
    )


def _matmul_poison(poisons):
    ps, pm = poisons[0], poisons[1]
    out = ps.any(dim=0)[:, None] | pm.any(dim=0)[None, :]
    return out | poisons[2] if len(poisons) > 2 and poisons[2] is not None else out


def nc_matmul(*args, **kwargs):
    """stationary.T @ moving into PSUM (fp32 accumulation)."""
    if new_style(args, kwargs, True, 2, "stationary"):
        d = split(
            args,
            kwargs,
            {
                "dst": REQ,
                "stationary": REQ,
                "moving": REQ,
                "is_stationary_onezero": False,
                "is_moving_onezero": False,
                "is_transpose": False,
                "accumulate": None,
                "tile_position": (),
                "tile_size": (),
                "perf_mode": None,
            },
        )
    else:
        d = split(
            args,
            kwargs,
            {
                "stationary": REQ,
                "moving": REQ,
                "is_stationary_onezero": False,
                "is_moving_onezero": False,
                "is_transpose": False,
                "tile_position": (),
                "tile_size": (),
                "mask": None,
            },
        )
        d.setdefault("dst", None)
    need(d, "stationary", "moving")
    stationary, moving, dst = as_tile(d["stationary"]), as_tile(d["moving"]), d.get("dst")
    if d.get("is_transpose"):  # the PE array passes stationary through: dst = stationary.T @ moving (an identity)
        if dst is None:
            return matmul_instruction(stationary, moving, "nc_matmul")
        return matmul_instruction(stationary, moving, "nc_matmul", dst=as_tile(dst, "nc_matmul dst"))
    if dst is None:
        return matmul_instruction(stationary, moving, "nc_matmul", mask=d.get("mask"))
    dst = as_tile(dst, "nc_matmul dst")
    if dst.ndim > 2:  # [M, a, b] holds the [M, a * b] result in order
        dst = views.flatten_dims(dst, 1, dst.ndim - 1)
    acc = d.get("accumulate")
    if acc is None:  # the first write to PSUM overwrites, later ones accumulate
        acc = (
            not bool(dst.access.gather(dst.access.buffer.poison).all())
            if dst.access.buffer.poison is not None
            else False
        )
    pairs = [(stationary, moving)]
    if d.get("perf_mode") == matmul_perf_mode.double_row:
        pairs = _double_row_halves(stationary, moving)
    for i, (s_half, m_half) in enumerate(pairs):
        _matmul_into(dst, s_half, m_half, acc or i > 0, double_row=len(pairs) == 2)
    return dst


def _matmul_into(dst, stationary, moving, accumulate: bool, double_row: bool = False):
    tr = state.require("nisa.nc_matmul")
    if accumulate:
        tmp = matmul_instruction(stationary, moving, "nc_matmul")
        tr.retarget(tr.instrs[-1], tmp.access.buffer, dst.access, accumulate=True)
    else:
        matmul_instruction(stationary, moving, "nc_matmul", dst=dst)
    if double_row:  # the two rows of each PE run at once: each half at half the time
        tr.instrs[-1].cost["double_row"] = True


def _double_row_halves(stationary, moving):
    """FP8 double-row mode: [K, 2, M] and [K, 2, N] contract over K and the
    pair, as two matmuls accumulating into one result."""
    tr = state.require("nisa.nc_matmul")
    if stationary.ndim != 3 or moving.ndim != 3 or stationary.shape[1] != 2 or moving.shape[1] != 2:
        raise tr.error(
            f"nisa.nc_matmul(perf_mode=double_row) takes [K, 2, M] and [K, 2, N] operands, got "
            f"{list(stationary.shape)} and {list(moving.shape)}"
        )
    return [(stationary.select(1, r), moving.select(1, r)) for r in (0, 1)]


def nc_transpose(*args, **kwargs):
    if new_style(args, kwargs, True, 1, "data"):
        d = split(args, kwargs, {"dst": REQ, "data": REQ, "engine": engine.unknown})
    else:
        d = split(args, kwargs, {"data": REQ, "mask": None, "dtype": None, "engine": engine.unknown})
    data = as_tile(d["data"], "nc_transpose data")
    tr = state.require("nisa.nc_transpose")
    eng = engine_name(d.get("engine"), "tensor")
    if data.ndim < 2:
        raise tr.error(f"nisa.nc_transpose takes a tile with a free dimension, got {list(data.shape)}")
    p, f = data.shape[0], math.prod(data.shape[1:])
    limit = 32 if eng == "vector" else tr.limits.pmax
    if p > limit or f > limit:
        raise tr.error(f"nisa.nc_transpose on the {eng} engine: tile {list(data.shape)} exceeds {limit} x {limit}")
    if eng == "tensor" and data.access.buffer.kind is PSUM:
        raise tr.error("nisa.nc_transpose on the Tensor engine reads SBUF, not PSUM")
    dst = d.get("dst")
    kind = PSUM if eng == "tensor" else SBUF
    dtype = None if dst is not None else (dtypes.to_torch(d["dtype"]) if d.get("dtype") else data.dtype)
    if kind is PSUM and dtype not in (None, torch.float32, torch.bfloat16):
        dtype = torch.float32
    return emit(
        "nc_transpose",
        eng,
        lambda a: a.reshape(a.shape[0], -1).t(),
        [data],
        dst=dst,
        shape=(f, p),
        dtype=dtype,
        kind=kind,
        keep_src_shapes=True,
        poison_rule=lambda ps: ps[0].reshape(p, -1).t(),
        cost={"k": p, "m": p, "n": f, "in_dtype": data.dtype},
    )


nc_matmul_mx = trainium3_only("nc_matmul_mx")  # MX: microscaled fp8/fp4 matmul

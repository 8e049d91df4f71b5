"""`nl.matmul` and `nl.transpose` (part of nki.language) and the Tensor-engine
instruction they share with `nisa.nc_matmul`: contraction on the partition
axis, results in fp32 PSUM, the matmul limits checked."""

import torch

from . import dtypes as _dt
from . import trace as _tracing
from .emit import as_tile, emit
from .emit import check_on_chip as _check_on_chip
from .tile import Tile
from .trace import PSUM


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


def _matmul_engine(stationary, moving, name, kind=PSUM, dst=None, mask=None):
    tr = _tracing.require(name)
    if stationary.ndim != 2 or moving.ndim != 2:
        raise tr.error(f"{name}: operands must be 2-D tiles, got {list(stationary.shape)} and {list(moving.shape)}")
    for t in (stationary, moving):
        _check_on_chip(t, name)
        if t.access.buffer.kind is PSUM:
            raise tr.error(
                f"{name}: matmul operands are read from SBUF, but {t.access.buffer.describe()} is in "
                f"PSUM; copy it to SBUF first"
            )
    k, m = stationary.shape
    k2, n = moving.shape
    _check_matmul(tr, m, n, k, k2, name)
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
        shape=(m, n),
        dtype=torch.float32,
        kind=kind,
        make_step=matmul_step,
        mask=mask,
        keep_src_shapes=True,
        poison_rule=_matmul_poison,
        cost={"k": k, "m": m, "n": n, "in_dtype": stationary.dtype},
    )


def _matmul_poison(poisons):
    ps, pm = poisons[0], poisons[1]
    out = ps.any(dim=0)[:, None] | pm.any(dim=0)[None, :]
    return out | poisons[2] if len(poisons) > 2 and poisons[2] is not None else out


def matmul(x, y, transpose_x=False, mask=None, **kwargs) -> Tile:
    """x @ y (x.T @ y with transpose_x=True, the Tensor engine's native form:
    contraction on the partition axis). The result is an fp32 PSUM tile."""
    x = as_tile(x, "nl.matmul x")
    y = as_tile(y, "nl.matmul y")
    if not transpose_x:
        x = transpose(x)
    return _matmul_engine(x, y, "matmul", mask=mask)


def _transpose_step(rd, wr, accumulate):
    src, out = rd[0], wr[0]
    return lambda env: out.put(env, src.get(env).t())


def transpose(x, dtype=None, mask=None, **kwargs) -> Tile:
    x = as_tile(x, "nl.transpose operand")
    _check_on_chip(x, "nl.transpose")
    tr = _tracing.require("nl.transpose")
    if x.ndim != 2:
        raise tr.error(f"nl.transpose takes a 2-D tile, got {list(x.shape)}")
    p, f = x.shape
    if f > tr.limits.pmax:
        raise tr.error(
            f"nl.transpose: free size {f} of {list(x.shape)} becomes the partition dimension, over {tr.limits.pmax}"
        )
    out = _dt.to_torch(dtype) if dtype is not None else x.dtype
    return emit(
        "transpose",
        "tensor",
        None,
        [x],
        shape=(f, p),
        dtype=out,
        make_step=_transpose_step,
        keep_src_shapes=True,
        poison_rule=lambda ps: ps[0].t() | (ps[1] if len(ps) > 1 else False),
        mask=mask,
        cost={"k": p, "m": p, "n": f, "in_dtype": x.dtype},
    )

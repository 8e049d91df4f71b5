"""`nki.language` (`nl`): memory, indexing, loops, arithmetic, activations,
reductions and matmul on tiles, as AWS's NKI documents them.

Each function records instructions on the current trace (emit.py) and
returns a tile; nothing computes while tracing. Engines follow AWS's
assignment: DMA for load/store, the Tensor engine for matmul/transpose, the
Scalar engine for activations, the Vector engine for two-input elementwise
math and reductions, GpSimd for iota.
"""

from __future__ import annotations

import builtins
import math

import torch

from .. import trainium as _trainium
from . import dtypes as _dt
from . import trace as _tracing
from .dtypes import (
    bfloat16,  # noqa: F401
    bool_,  # noqa: F401
    float8_e4m3,  # noqa: F401
    float8_e5m2,  # noqa: F401
    float16,  # noqa: F401
    float32,  # noqa: F401
    int8,  # noqa: F401
    int16,  # noqa: F401
    int32,  # noqa: F401
    int64,  # noqa: F401
    tfloat32,  # noqa: F401
    uint8,  # noqa: F401
    uint16,  # noqa: F401
    uint32,  # noqa: F401
)
from .emit import (
    as_tile,
    dma_cost,
    emit,
    f32,
    is_scalar,
    new_buffer,
    new_tile,
    partition_aligned,
)
from .emit import (
    check_on_chip as _check_on_chip,
)
from .errors import NKIError
from .indexing import IndexExpr, arange, ds, mgrid  # noqa: F401
from .tile import Access, Tile
from .trace import HBM, PRIVATE_HBM, PSUM, SBUF, SHARED_HBM

sbuf, psum, hbm, shared_hbm, private_hbm = SBUF, PSUM, HBM, SHARED_HBM, PRIVATE_HBM
_TRN2 = _trainium.TRN2
tile = Tile


class tile_size:  # noqa: N801  (AWS's name)
    """The hardware's tile limits (the Trainium2 values of torch_neuronx.trainium)."""

    pmax = _TRN2.pmax
    gemm_stationary_fmax = _TRN2.gemm_stationary_fmax
    gemm_moving_fmax = _TRN2.gemm_moving_fmax
    psum_fmax = psum_bank_fmax = _TRN2.psum_fmax
    psum_bank_fmax_bytes = _TRN2.psum_bank_bytes
    psum_num_banks = _TRN2.psum_banks
    bn_stats_fmax = _TRN2.bn_stats_fmax
    sbuf_size_bytes = _TRN2.sbuf_bytes
    total_available_sbuf_size = sbuf_fmax_bytes = _TRN2.sbuf_bytes_per_partition


class fp32:  # noqa: N801
    """`nl.fp32.min`: the lowest finite fp32 (0xff7fffff), the masks' stand-in for -inf."""

    min = -3.4028234663852886e38


class bfp16:  # noqa: N801
    min = -3.3895313892515355e38  # 0xff7f, the lowest finite bf16


class par_dim(int):  # noqa: N801
    """Marks the partition dimension in a shape: nl.ndarray((4, nl.par_dim(128), 512), ...)."""


# ---------------------------------------------------------------- program ids / loops
def program_id(axis=0) -> int:
    tr = _tracing.require("nl.program_id")
    if axis >= len(tr.grid):
        return 0
    return tr.program[axis]


def num_programs(axes=0) -> int:
    tr = _tracing.require("nl.num_programs")
    if isinstance(axes, (tuple, list)):
        return math.prod(num_programs(a) for a in axes)
    return tr.grid[axes] if axes < len(tr.grid) else 1


def program_ndim() -> int:
    return len(_tracing.require("nl.program_ndim").grid)


def _range(kind, args):
    rng = range(*(int(a) for a in args))
    tr = _tracing.current()
    return iter(rng) if tr is None else tr.loop(kind, rng)


def affine_range(*args, **kwargs):
    """Iterations are independent: the compiler may reorder and pipeline
    them. Reading what an earlier iteration wrote raises NKIError."""
    return _range("affine", args)


def sequential_range(*args, **kwargs):
    return _range("sequential", args)


def static_range(*args, **kwargs):
    return _range("static", args)


# ---------------------------------------------------------------- allocation
def _shape_and_par(shape):
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    par = next((i for i, s in enumerate(shape) if isinstance(s, par_dim)), 0)
    return tuple(int(s) for s in shape), par


def ndarray(shape, dtype, buffer=None, name="", **kwargs) -> Tile:
    """An uninitialised tensor in `buffer` (SBUF by default; an HBM buffer
    makes a kernel output or scratch tensor)."""
    tr = _tracing.require("nl.ndarray")
    kind = buffer or SBUF
    shape, par = _shape_and_par(shape)
    dtype = _dt.to_torch(dtype)
    if kind.on_chip:
        return new_tile(shape, dtype, kind, name or None, par_axis=par)
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


def _fill(t: Tile, value):
    emit(
        "memset",
        "vector",
        lambda: torch.tensor(value),
        [],
        dst=t,
        make_step=lambda rd, wr, acc: lambda env: wr[0].put(env, value),
    )
    return t


def full(shape, fill_value, dtype, buffer=None, name="", **kwargs) -> Tile:
    return _fill(ndarray(shape, dtype, buffer or SBUF, name), fill_value)


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


# ---------------------------------------------------------------- data movement
def _require_kind(t: Tile, kinds, what, role):
    if t.access.buffer.kind not in kinds:
        tr = _tracing.require(what)
        names = " or ".join(k.name.upper() for k in kinds)
        raise tr.error(
            f"{what}: the {role} must be in {names}, but {t.access.buffer.describe()} is in "
            f"{t.access.buffer.kind.name.upper()} (loads and stores move data between HBM and SBUF only)"
        )


_HBMS = (HBM, SHARED_HBM, PRIVATE_HBM)


def load(src, mask=None, dtype=None, **kwargs) -> Tile:
    src = as_tile(src, "nl.load source")
    _require_kind(src, _HBMS, "nl.load", "source")
    out_dtype = _dt.to_torch(dtype) if dtype is not None else src.dtype
    return emit("load", "dma", lambda x: x, [src], dtype=out_dtype, mask=mask, cost=dma_cost(src))


def store(dst, value, mask=None, **kwargs):
    dst = as_tile(dst, "nl.store destination")
    _require_kind(dst, _HBMS, "nl.store", "destination")
    if is_scalar(value):
        raise _tracing.require("nl.store").error("nl.store stores a tile, not a scalar: fill an SBUF tile first")
    value = as_tile(value, "nl.store value")
    _require_kind(value, (SBUF, PSUM), "nl.store", "value")
    if value.access.buffer.kind is PSUM:  # DMA cannot read PSUM: the compiler copies to SBUF first
        value = copy(value)
    emit("store", "dma", lambda x: x, [value], dst=dst, mask=mask, cost=dma_cost(value, dst))


def load_transpose2d(src, mask=None, dtype=None, **kwargs) -> Tile:
    src = as_tile(src, "nl.load_transpose2d source")
    _require_kind(src, _HBMS, "nl.load_transpose2d", "source")
    if src.ndim != 2:
        raise _tracing.require("nl.load_transpose2d").error(
            f"nl.load_transpose2d takes a 2-D tensor, got shape {list(src.shape)}"
        )
    out_dtype = _dt.to_torch(dtype) if dtype is not None else src.dtype
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
    _check_on_chip(src, "nl.copy")
    out_dtype = _dt.to_torch(dtype) if dtype is not None else src.dtype
    return emit("copy", "vector", lambda x: x, [src], dtype=out_dtype, mask=mask)


def broadcast_to(src, shape, **kwargs) -> Tile:
    src = as_tile(src, "broadcast_to source")
    shape = tuple(int(s) for s in shape)
    src = partition_aligned(src, len(shape))
    try:
        torch.broadcast_shapes(src.shape, shape)
    except RuntimeError:
        raise _tracing.require("broadcast_to").error(f"cannot broadcast {list(src.shape)} to {list(shape)}") from None
    return emit("broadcast_to", "vector", lambda x: x, [src], shape=shape, dtype=src.dtype)


def _assign(target: Tile, value):
    """`target[...] = value`."""
    tr = _tracing.require("tile assignment")
    if is_scalar(value):
        _fill(target, value.item() if hasattr(value, "item") else value)
        return
    value = as_tile(value, "assigned value")
    if (
        value.updated is not None
        and tr.instrs
        and tr.instrs[-1] is value.updated
        and value.access.buffer is target.access.buffer
        and value.shape == target.shape
    ):
        value.updated = None  # `t[idx] += x` just wrote t[idx]; Python's store-back is no instruction
        return
    tkind, vkind = target.access.buffer.kind, value.access.buffer.kind
    if not tkind.on_chip:
        store(target, value)
        return
    if not vkind.on_chip:
        target_t = load(value, dtype=target.dtype)
        value = target_t
    prod = value.producer
    if (
        prod is not None
        and not value.used
        and tr.instrs
        and tr.instrs[-1] is prod
        and tkind is vkind
        and _same_tile_shape(target.shape, value.shape)
    ):
        tr.retarget(prod, value.access.buffer, target.access)
        value.used = True
        return
    emit("copy", "vector", lambda x: x, [value], dst=target)


def _same_tile_shape(a, b) -> bool:
    """Equal shapes, counting a lower-rank tile as padded with trailing 1s ((P,) is (P, 1))."""
    a, b = tuple(a), tuple(b)
    n = builtins.max(len(a), len(b))
    return a + (1,) * (n - len(a)) == b + (1,) * (n - len(b))


def _inplace(name, target: Tile, value):
    """`target += value` (and -=, *=, /=). `+=` is an accumulation: allowed
    across affine_range iterations (PSUM accumulation of matmuls)."""
    tr = _tracing.require("in-place tile update")
    _inplace_op(tr, name, target, value)
    target.updated = tr.instrs[-1] if tr.instrs else None


def _inplace_op(tr, name, target: Tile, value):
    _check_on_chip(target, f"tile {name}")
    if name == "add" and isinstance(value, Tile):
        prod = value.producer
        if (
            prod is not None
            and not value.used
            and tr.instrs
            and tr.instrs[-1] is prod
            and target.access.buffer.kind is value.access.buffer.kind
            and _same_tile_shape(target.shape, value.shape)
        ):
            tr.retarget(prod, value.access.buffer, target.access, accumulate=True)
            value.used = True
            return
        emit("add", "vector", lambda x: f32(x), [value], dst=target, accumulate=True)
        return
    globals()[name](target, value, dst=target)


def _reshape(t: Tile, shape) -> Tile:
    shape = tuple(int(s) for s in shape)
    buf = t.access.buffer
    if math.prod(shape) != math.prod(t.shape):
        raise _tracing.require("reshape").error(f"cannot reshape {list(t.shape)} to {list(shape)}")
    tr = _tracing.require("reshape")
    if not t.access.is_whole():
        raise tr.error("only whole tensors and tiles can be reshaped (tensor.reshape(...)), not an indexed part")
    if buf.kind.on_chip and shape[0] != t.shape[0]:
        raise tr.error(f"reshaping an on-chip tile keeps its partition dimension: {list(t.shape)} to {list(shape)}")
    from .trace import Buffer

    role = "alias" if buf.kind.on_chip else buf.role
    alias = Buffer(tr, buf.kind, shape, buf.dtype, f"{buf.name}.reshape", role, index=buf.index, parent=buf)
    return Tile(Access.whole(alias))


from .nl_math import *  # noqa: E402,F401,F403  (elementwise, activations, reductions, softmax, rms_norm)
from .nl_math import _axes  # noqa: E402,F401  (nki.isa's reductions)
from .nl_matmul import _matmul_engine, matmul, transpose  # noqa: E402,F401


# ---------------------------------------------------------------- misc
def device_print(prefix, x, **kwargs):
    x = as_tile(x, "nl.device_print operand")

    def make(rd, wr, acc):
        def run(env):
            print(prefix, rd[0].get(env))

        return run

    tr = _tracing.require("nl.device_print")
    from .trace import Instr

    tr.record(Instr("device_print", "none", [x.access], [], make, tr.line()))


def _no_rng(name):
    def refuse(*args, **kwargs):
        raise NKIError(
            f"nl.{name} is not supported yet: it needs the device RNG inside kernels; draw random "
            f"numbers with PyTorch outside the kernel (torch.rand, torch.nn.functional.dropout)"
        )

    refuse.__name__ = name
    return refuse


dropout, rand, random_seed = _no_rng("dropout"), _no_rng("rand"), _no_rng("random_seed")

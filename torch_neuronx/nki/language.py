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
from .dtypes import (bfloat16, bool_, float8_e4m3, float8_e5m2, float16, float32, int8, int16, int32,  # noqa: F401
                     int64, tfloat32, uint8, uint16, uint32)
from .emit import as_tile, emit, f32, free_size, is_scalar, new_buffer, new_tile, partition_aligned
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
                raise tr.error("grid instances allocate different shared_hbm tensors; allocate the same ones "
                               "in every instance")
            buf = tr.shared[tr.shared_next]
            tr.shared_next += 1
            if buf.shape != shape or buf.dtype != dtype:
                raise tr.error(f"grid instance {tr.program} allocates shared_hbm {list(shape)} {dtype} where the "
                               f"first instance allocated {list(buf.shape)} {buf.dtype}")
            return Tile(Access.whole(buf))
        buf = new_buffer(shape, dtype, kind, name or None, role="out")
        tr.shared.append(buf)
        return Tile(Access.whole(buf))
    return Tile(Access.whole(new_buffer(shape, dtype, kind, name or None, role="scratch")))


def _fill(t: Tile, value):
    emit("memset", "vector", lambda: torch.tensor(value), [], dst=t,
         make_step=lambda rd, wr, acc: (lambda env: wr[0].put(env, value)))
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
        raise tr.error(f"{what}: the {role} must be in {names}, but {t.access.buffer.describe()} is in "
                       f"{t.access.buffer.kind.name.upper()} (loads and stores move data between HBM and SBUF only)")


_HBMS = (HBM, SHARED_HBM, PRIVATE_HBM)


def _dma_cost(a, b=None):
    return {"bytes": math.prod(a.shape) * builtins.max(a.dtype.itemsize, (a if b is None else b).dtype.itemsize)}


def load(src, mask=None, dtype=None, **kwargs) -> Tile:
    src = as_tile(src, "nl.load source")
    _require_kind(src, _HBMS, "nl.load", "source")
    out_dtype = _dt.to_torch(dtype) if dtype is not None else src.dtype
    return emit("load", "dma", lambda x: x, [src], dtype=out_dtype, mask=mask, cost=_dma_cost(src))


def store(dst, value, mask=None, **kwargs):
    dst = as_tile(dst, "nl.store destination")
    _require_kind(dst, _HBMS, "nl.store", "destination")
    if is_scalar(value):
        raise _tracing.require("nl.store").error("nl.store stores a tile, not a scalar: fill an SBUF tile first")
    value = as_tile(value, "nl.store value")
    _require_kind(value, (SBUF, PSUM), "nl.store", "value")
    if value.access.buffer.kind is PSUM:  # DMA cannot read PSUM: the compiler copies to SBUF first
        value = copy(value)
    emit("store", "dma", lambda x: x, [value], dst=dst, mask=mask, cost=_dma_cost(value, dst))


def load_transpose2d(src, mask=None, dtype=None, **kwargs) -> Tile:
    src = as_tile(src, "nl.load_transpose2d source")
    _require_kind(src, _HBMS, "nl.load_transpose2d", "source")
    if src.ndim != 2:
        raise _tracing.require("load").error(f"nl.load_transpose2d takes a 2-D tensor, got shape {list(src.shape)}")
    out_dtype = _dt.to_torch(dtype) if dtype is not None else src.dtype
    t = _as_view(src, src.access[...], transpose=True)
    return emit("load_transpose2d", "dma", lambda x: x, [t], dtype=out_dtype, mask=mask, cost=_dma_cost(src))


def _as_view(t: Tile, acc: Access, transpose=False) -> Tile:
    if transpose:
        arrays = [a.expand(acc.shape).transpose(0, 1) for a in acc.arrays]
        acc = Access(acc.buffer, arrays, (acc.shape[1], acc.shape[0]))
    return Tile(acc)


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


def _check_on_chip(t: Tile, what: str):
    if not t.access.buffer.kind.on_chip:
        tr = _tracing.require(what)
        raise tr.error(f"{what}: {t.access.buffer.describe()} is in HBM; engines compute on SBUF/PSUM tiles: "
                       f"nl.load it first")


def _assign(target: Tile, value):
    """`target[...] = value`."""
    tr = _tracing.require("tile assignment")
    if is_scalar(value):
        _fill(target, value.item() if hasattr(value, "item") else value)
        return
    value = as_tile(value, "assigned value")
    if value.updated and value.access.buffer is target.access.buffer and value.shape == target.shape:
        value.updated = False  # `t[idx] += x` already wrote t[idx]; Python's store-back is no instruction
        return
    tkind, vkind = target.access.buffer.kind, value.access.buffer.kind
    if not tkind.on_chip:
        store(target, value)
        return
    if not vkind.on_chip:
        target_t = load(value, dtype=target.dtype)
        value = target_t
    prod = value.producer
    if (prod is not None and not value.used and tr.instrs and tr.instrs[-1] is prod and tkind is vkind
            and _same_tile_shape(target.shape, value.shape)):
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
    _check_on_chip(target, f"tile {name}")
    if name == "add" and isinstance(value, Tile):
        prod = value.producer
        if (prod is not None and not value.used and tr.instrs and tr.instrs[-1] is prod
                and target.access.buffer.kind is value.access.buffer.kind
                and _same_tile_shape(target.shape, value.shape)):
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


# ---------------------------------------------------------------- elementwise
def _binary(name, fn, engine="vector", out_bool=False):
    def op(x, y, dtype=None, mask=None, dst=None, **kwargs):
        tiles = [a for a in (x, y) if isinstance(a, Tile)]
        if not tiles:
            raise NKIError(f"nl.{name} needs at least one tile operand")
        for t in tiles:
            _check_on_chip(t, f"nl.{name}")
        if dtype is not None:
            out = _dt.to_torch(dtype)
        elif out_bool:
            out = tiles[0].dtype if len(tiles) == 1 else _dt.promote(tiles[0].dtype, tiles[1].dtype)
        elif len(tiles) == 2:
            out = _dt.promote(x.dtype, y.dtype)
        else:
            other = y if tiles[0] is x else x
            out = _dt.promote(tiles[0].dtype, _dt.weak(other))
        return emit(name, engine, lambda a, b: fn(_t(a), _t(b)), [x, y], dtype=out, mask=mask, dst=dst)
    op.__name__ = name
    op.torch_fn = fn
    return op


def _t(x):
    """An operand as an fp32-computing tensor (scalars become 0-d tensors)."""
    return f32(x) if isinstance(x, torch.Tensor) else torch.tensor(x, dtype=torch.float32 if isinstance(x, float) else None)


def _cmp(fn):
    return lambda a, b: fn(a, b).to(torch.float32)


add = _binary("add", torch.add)
subtract = _binary("subtract", torch.sub)
multiply = _binary("multiply", torch.mul)
divide = _binary("divide", torch.div)
power = _binary("power", torch.pow)
maximum = _binary("maximum", torch.maximum)
minimum = _binary("minimum", torch.minimum)
fmod = _binary("fmod", torch.fmod)
equal = _binary("equal", _cmp(torch.eq), out_bool=True)
not_equal = _binary("not_equal", _cmp(torch.ne), out_bool=True)
greater = _binary("greater", _cmp(torch.gt), out_bool=True)
greater_equal = _binary("greater_equal", _cmp(torch.ge), out_bool=True)
less = _binary("less", _cmp(torch.lt), out_bool=True)
less_equal = _binary("less_equal", _cmp(torch.le), out_bool=True)
logical_and = _binary("logical_and", _cmp(torch.logical_and), out_bool=True)
logical_or = _binary("logical_or", _cmp(torch.logical_or), out_bool=True)
logical_xor = _binary("logical_xor", _cmp(torch.logical_xor), out_bool=True)


bitwise_and = _binary("bitwise_and", torch.bitwise_and)
bitwise_or = _binary("bitwise_or", torch.bitwise_or)
bitwise_xor = _binary("bitwise_xor", torch.bitwise_xor)
left_shift = _binary("left_shift", torch.bitwise_left_shift)
right_shift = _binary("right_shift", torch.bitwise_right_shift)


def _unary(name, fn, engine="scalar"):
    def op(x, dtype=None, mask=None, dst=None, **kwargs):
        x = as_tile(x, f"nl.{name} operand")
        _check_on_chip(x, f"nl.{name}")
        out = _dt.to_torch(dtype) if dtype is not None else x.dtype
        return emit(name, engine, lambda a: fn(f32(a)), [x], dtype=out, mask=mask, dst=dst)
    op.__name__ = name
    op.torch_fn = fn
    return op


def _gelu_tanh(x):
    return torch.nn.functional.gelu(x, approximate="tanh")


exp = _unary("exp", torch.exp)
log = _unary("log", torch.log)
sqrt = _unary("sqrt", torch.sqrt)
rsqrt = _unary("rsqrt", torch.rsqrt)
reciprocal = _unary("reciprocal", torch.reciprocal)
abs = _unary("abs", torch.abs, "vector")  # noqa: A001
negative = _unary("negative", torch.neg, "vector")
sign = _unary("sign", torch.sign)
square = _unary("square", torch.square)
tanh = _unary("tanh", torch.tanh)
sigmoid = _unary("sigmoid", torch.sigmoid)
relu = _unary("relu", torch.relu)
gelu = _unary("gelu", torch.nn.functional.gelu)
gelu_apprx_tanh = _unary("gelu_apprx_tanh", _gelu_tanh)
silu = _unary("silu", torch.nn.functional.silu)
softplus = _unary("softplus", torch.nn.functional.softplus)
mish = _unary("mish", torch.nn.functional.mish)
sin = _unary("sin", torch.sin)
cos = _unary("cos", torch.cos)
tan = _unary("tan", torch.tan)
arctan = _unary("arctan", torch.atan)
erf = _unary("erf", torch.erf)
ceil = _unary("ceil", torch.ceil, "vector")
floor = _unary("floor", torch.floor, "vector")
trunc = _unary("trunc", torch.trunc, "vector")
logical_not = _unary("logical_not", lambda a: torch.logical_not(a).to(torch.float32), "vector")
invert = bitwise_not = _unary("invert", torch.bitwise_not, "vector")
identity = _unary("identity", lambda a: a)


def where(condition, x, y, dtype=None, mask=None, **kwargs) -> Tile:
    tiles = [t for t in (condition, x, y) if isinstance(t, Tile)]
    if isinstance(condition, IndexExpr):
        condition = condition.t  # an index predicate: a constant mask
        if not tiles:
            raise NKIError("nl.where needs a tile operand")
    out = _dt.to_torch(dtype) if dtype is not None else (x.dtype if isinstance(x, Tile) else y.dtype)

    def fn(c, a, b):
        return torch.where(torch.as_tensor(c).bool(), torch.as_tensor(f32(a)), torch.as_tensor(f32(b)))
    return emit("where", "vector", fn, [condition, x, y], dtype=out, mask=mask)


# ---------------------------------------------------------------- reductions
def _axes(x: Tile, axis, name):
    axes = [axis] if isinstance(axis, int) else list(axis)
    axes = [a % x.ndim for a in axes]
    if 0 in axes:
        tr = _tracing.require(f"nl.{name}")
        raise tr.error(f"nl.{name}: reducing along the partition axis (axis 0) of {list(x.shape)} is not "
                       f"supported by the engines; transpose the tile (nl.transpose) or reduce with a matmul")
    return sorted(axes)


def _reduction(name, fn):
    def op(x, axis, dtype=None, mask=None, keepdims=False, dst=None, **kwargs):
        x = as_tile(x, f"nl.{name} operand")
        _check_on_chip(x, f"nl.{name}")
        axes = _axes(x, axis, name)
        shape = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
        if not keepdims:
            shape = tuple(s for i, s in enumerate(x.shape) if i not in axes)
        out = _dt.to_torch(dtype) if dtype is not None else x.dtype

        def compute(a):
            r = fn(f32(a), axes)
            return r if keepdims else r.reshape([s for i, s in enumerate(a.shape) if i not in axes])
        return emit(name, "vector", compute, [x], shape=shape, dtype=out, mask=mask, dst=dst,
                    keep_src_shapes="partition", cost={"elements": math.prod(x.shape)})
    op.__name__ = name
    return op


sum = _reduction("sum", lambda a, ax: a.sum(dim=ax, keepdim=True))  # noqa: A001
prod = _reduction("prod", lambda a, ax: a.reshape(*a.shape).prod(dim=ax[0], keepdim=True) if len(ax) == 1
                  else a.flatten(ax[0], ax[-1]).prod(dim=ax[0], keepdim=True).reshape(
                      [1 if i in ax else s for i, s in enumerate(a.shape)]))
max = _reduction("max", lambda a, ax: a.amax(dim=ax, keepdim=True))  # noqa: A001
min = _reduction("min", lambda a, ax: a.amin(dim=ax, keepdim=True))  # noqa: A001
mean = _reduction("mean", lambda a, ax: a.mean(dim=ax, keepdim=True))
var = _reduction("var", lambda a, ax: a.var(dim=ax, keepdim=True, unbiased=False))
all = _reduction("all", lambda a, ax: a.bool().all(dim=ax[0], keepdim=True).to(torch.float32)  # noqa: A001
                 if len(ax) == 1 else a.bool().flatten(ax[0], ax[-1]).all(dim=ax[0], keepdim=True).float())


def softmax(x, axis, dtype=None, compute_dtype=None, mask=None, **kwargs) -> Tile:
    x = as_tile(x, "nl.softmax operand")
    _check_on_chip(x, "nl.softmax")
    axes = _axes(x, axis, "softmax")
    out = _dt.to_torch(dtype) if dtype is not None else x.dtype

    def fn(a):
        a = f32(a)
        e = torch.exp(a - a.amax(dim=axes, keepdim=True))
        return e / e.sum(dim=axes, keepdim=True)
    return emit("softmax", "scalar", fn, [x], dtype=out, mask=mask)


def rms_norm(x, w, axis, n, epsilon=1e-6, dtype=None, compute_dtype=None, mask=None, **kwargs) -> Tile:
    x = as_tile(x, "nl.rms_norm operand")
    _check_on_chip(x, "nl.rms_norm")
    axes = _axes(x, axis, "rms_norm")
    out = _dt.to_torch(dtype) if dtype is not None else x.dtype

    def fn(a, weight):
        a = f32(a)
        return a * torch.rsqrt(a.square().sum(dim=axes, keepdim=True) / n + epsilon) * f32(weight)
    return emit("rms_norm", "vector", fn, [x, w], dtype=out, mask=mask)


# ---------------------------------------------------------------- matmul / transpose
def _check_matmul(tr, stationary_free, moving_free, k_stat, k_mov, what):
    lim = tr.limits
    if k_stat != k_mov:
        raise tr.error(f"{what}: the contraction dimension must be the partition axis of both operands, but "
                       f"the stationary operand has {k_stat} partitions and the moving one {k_mov}")
    if k_stat > lim.pmax:
        raise tr.error(f"{what}: contraction (partition) size {k_stat} exceeds {lim.pmax}")
    if stationary_free > lim.gemm_stationary_fmax:
        raise tr.error(f"{what}: stationary free size {stationary_free} exceeds the limit of "
                       f"{lim.gemm_stationary_fmax} (tile the M dimension by nl.tile_size.gemm_stationary_fmax)")
    if moving_free > lim.gemm_moving_fmax:
        raise tr.error(f"{what}: moving free size {moving_free} exceeds the limit of {lim.gemm_moving_fmax} "
                       f"(tile the N dimension by nl.tile_size.gemm_moving_fmax)")


def matmul_step(rd, wr, accumulate):
    """Runtime step of `dst (+)= stationary.T @ moving`, accumulated in fp32."""
    a_op, b_op = rd[0], rd[1]
    out = wr[0]

    def run(env):
        a = a_op.get(env)
        b = b_op.get(env)
        if a.dtype != torch.float32:
            a = a.float()
        if b.dtype != torch.float32:
            b = b.float()
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
            raise tr.error(f"{name}: matmul operands are read from SBUF, but {t.access.buffer.describe()} is in "
                           f"PSUM; copy it to SBUF first")
    k, m = stationary.shape
    k2, n = moving.shape
    _check_matmul(tr, m, n, k, k2, name)
    if dst is not None and dst.access.buffer.kind is not PSUM:
        raise tr.error(f"{name}: matmul results accumulate in PSUM, but the destination "
                       f"{dst.access.buffer.describe()} is in {dst.access.buffer.kind.name.upper()}")
    return emit(name, "tensor", None, [stationary, moving], dst=dst, shape=(m, n), dtype=torch.float32, kind=kind,
                make_step=matmul_step, mask=mask, keep_src_shapes=True, poison_rule=_matmul_poison,
                cost={"k": k, "m": m, "n": n, "in_dtype": stationary.dtype})


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
        raise tr.error(f"nl.transpose: free size {f} of {list(x.shape)} becomes the partition dimension, over "
                       f"{tr.limits.pmax}")
    out = _dt.to_torch(dtype) if dtype is not None else x.dtype
    return emit("transpose", "tensor", None, [x], shape=(f, p), dtype=out, make_step=_transpose_step,
                keep_src_shapes=True, poison_rule=lambda ps: ps[0].t() | (ps[1] if len(ps) > 1 else False), mask=mask, cost={"k": p, "m": p, "n": f, "in_dtype": x.dtype})


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


def dropout(x, rate, **kwargs):
    raise NKIError("nl.dropout is not supported yet: it needs the device RNG inside kernels; apply "
                   "torch.nn.functional.dropout outside the kernel")

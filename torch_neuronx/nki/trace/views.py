"""The view methods of a tensor as AWS's current NKI documents them
(`NkiTensor`): `slice`, `select`, `permute`, `broadcast`, `expand_dim`,
`squeeze_dim`, `reshape_dim`, `flatten_dims`, `reshape` of any view, `ap`
(an explicit `[[stride, count], ...]` access pattern over the storage), and
the `strides`, `offset`, `size` and `get_pattern()` they are built from.

A view never copies: each is a new Access into the same buffer, its index
tensors derived from the old ones (access.py). The storage a pattern
addresses is the buffer in row-major order, partitions included, as on the
chip: an SBUF tensor (128, 32) has partition stride 32."""

from __future__ import annotations

import math

import torch

from ..errors import NKIUnsupported
from . import indexing
from .access import Access, Indirect
from .buffers import SBUF
from .state import require

_I64 = torch.int64


def _full(t) -> list[torch.Tensor]:
    t.access._direct("a view")  # an indirect view's index tensors are stand-ins
    return [a.expand(t.shape) for a in t.access.arrays]


def _flat(t) -> torch.Tensor:
    """The storage index of each element of the view."""
    st = _row_major(t.access.buffer.shape)
    flat = torch.zeros(t.shape, dtype=_I64)
    for a, s in zip(_full(t), st):
        flat = flat + a * s
    return flat


def _row_major(shape) -> list[int]:
    out, acc = [], 1
    for s in reversed(shape):
        out.append(acc)
        acc *= s
    return out[::-1]


def _affine_flat(t):
    """(offset, strides) of the view's storage index when it is a strided
    view (no masks, no run-time start), else None: computed from its affine
    form, without building an index per element."""
    acc = t.access
    if acc.mask is not None or acc.indirect is not None:
        return None
    aff = acc.affine()
    if aff is None:
        return None
    offs, coeffs = aff
    st = _row_major(acc.buffer.shape)
    base = sum(o * s for o, s in zip(offs, st))
    return base, [sum(coeffs[d][k] * st[d] for d in range(len(st))) for k in range(len(t.shape))]


def _from_pattern(t, base: int, pattern):
    """The view of t's buffer at storage indices base + sum_k stride_k * o_k
    (pattern [[stride_k, count_k], ...]) as per-dimension affine index
    arrays, when every dimension's index is affine in o (no carry between
    dimensions); None when it is not."""
    buf = t.access.buffer
    shape, n = tuple(int(c) for _, c in pattern), len(pattern)
    if not buf.shape or not all(shape):
        return None
    st = _row_major(buf.shape)
    offs = [(base // r) % size for r, size in zip(st, buf.shape)]
    coeffs = [[0] * n for _ in buf.shape]
    for k, (stride, count) in enumerate(pattern):
        if count > 1:
            moved = base + int(stride)
            for d, (r, size) in enumerate(zip(st, buf.shape)):
                coeffs[d][k] = (moved // r) % size - offs[d]
    if sum(o * r for o, r in zip(offs, st)) != base:
        return None
    for k, (stride, count) in enumerate(pattern):
        if count > 1 and sum(coeffs[d][k] * st[d] for d in range(len(st))) != int(stride):
            return None
    for (lo, hi), size in zip(indexing.affine_bounds(offs, coeffs, shape), buf.shape):
        if lo < 0 or hi >= size:
            return None
    arrays = []
    for c, row in zip(offs, coeffs):
        a = torch.full((1,) * n, c, dtype=_I64)
        for k, m in enumerate(row):
            if m:
                a = a + m * torch.arange(shape[k], dtype=_I64).reshape([-1 if i == k else 1 for i in range(n)])
        arrays.append(a)
    return type(t)(Access(buf, arrays, shape))


def _from_flat(t, flat: torch.Tensor):
    """The view of t's buffer at the storage indices `flat`. Indices past the
    buffer are kept (past its first dimension): a view may reach outside its
    tensor as long as no instruction uses it (AWS's kernels build the view of
    a tile they then skip), and an instruction that does fails its bounds
    check."""
    buf = t.access.buffer
    if not buf.shape:
        return type(t)(Access(buf, [], tuple(flat.shape)))
    st = _row_major(buf.shape)
    arrays = [flat // st[0]] + [(flat // r) % size for r, size in zip(st[1:], buf.shape[1:])]
    return type(t)(Access(buf, arrays, tuple(flat.shape)))


def _unsupported(tr, what) -> NKIUnsupported:
    return NKIUnsupported(f"{what} is not supported by the NKI emulator yet", kernel=tr.kernel_name, line=tr.line())


def _dim(t, dim) -> int:
    n = len(t.shape)
    if not -n <= dim < n:
        raise require("view").error(f"dimension {dim} is out of range for a tensor of shape {list(t.shape)}")
    return dim % n


def _new(t, arrays, shape):
    return type(t)(Access(t.access.buffer, arrays, tuple(shape)))


def strides(t) -> tuple:
    fast = _affine_flat(t)
    if fast is not None:
        return tuple(s if n > 1 else 0 for s, n in zip(fast[1], t.shape))
    flat = _flat(t)
    base = int(flat.reshape(-1)[0]) if flat.numel() else 0
    out = []
    for k, s in enumerate(t.shape):
        unit = [0] * len(t.shape)
        unit[k] = 1 if s > 1 else 0
        out.append(int(flat[tuple(unit)]) - base if s > 1 else 0)
    return tuple(out)


def offset(t) -> int:
    fast = _affine_flat(t)
    if fast is not None:
        return fast[0] if math.prod(t.shape) else 0
    flat = _flat(t)
    return int(flat.reshape(-1)[0]) if flat.numel() else 0


def get_pattern(t) -> list:
    return [[s, n] for s, n in zip(strides(t), t.shape)]


def ap(t, pattern, offset=None, scalar_offset=None, vector_offset=None, indirect_dim=0, dtype=None):
    tr = require("tensor.ap")
    if dtype is not None and dtype != t.dtype:
        raise _unsupported(tr, "tensor.ap(dtype=...), reinterpreting the storage as another dtype,")
    fast = _affine_flat(t)
    if fast is not None:
        base = torch.tensor(fast[0] if math.prod(t.shape) else 0, dtype=_I64)
    else:
        base = _flat(t).reshape(-1)[0] if t.shape and math.prod(t.shape) else torch.zeros((), dtype=_I64)
    if offset is not None:
        base = base + int(offset)
    if scalar_offset is None and vector_offset is None:
        view = _from_pattern(t, int(base), pattern) if pattern else None
        return view if view is not None else _from_flat(t, _pattern_flat(base, pattern, False))
    d = _dim(t, indirect_dim)
    flat = _pattern_flat(base, pattern, vector_offset is not None)
    return _indirect(tr, t, flat, scalar_offset, vector_offset, d, math.prod(t.shape[d + 1 :]))


def _pattern_flat(base, pattern, vector: bool) -> torch.Tensor:
    """The storage index of each element of `pattern` ([[stride, count], ...])
    from `base`. With a vector offset each row starts at its own run-time
    offset: the leading stride is unused, as on the chip."""
    flat = torch.as_tensor(base, dtype=_I64).clone()
    for k, (stride, n) in enumerate(pattern):
        if vector and k == 0:
            continue
        shape = [1] * len(pattern)
        shape[k] = int(n)
        flat = flat + int(stride) * torch.arange(int(n), dtype=_I64).reshape(shape)
    return flat.expand([int(n) for _, n in pattern]) if pattern else flat


def _indirect(tr, t, flat, scalar_offset, vector_offset, d, scale):
    """The view whose start along dimension d of t (`scale` storage elements
    per unit) is read at run time from an SBUF tile (access.Indirect)."""
    if scalar_offset is not None and vector_offset is not None:
        raise tr.error("tensor.ap: give scalar_offset or vector_offset, not both")
    index = scalar_offset if scalar_offset is not None else vector_offset
    what = "scalar_offset" if scalar_offset is not None else "vector_offset"
    if not isinstance(index, type(t)):  # a Tile
        raise _unsupported(tr, f"tensor.ap({what}={type(index).__name__}) (a register as the offset)")
    if index.access.buffer.kind is not SBUF:
        raise tr.error(f"tensor.ap: {what} must be an SBUF tile, not {index.access.buffer.describe()}")
    if index.dtype.torch.is_floating_point:
        raise tr.error(f"tensor.ap: {what} must hold integers (nl.int32, nl.uint32), not {index.dtype}")
    if scalar_offset is not None and math.prod(index.shape) != 1:
        raise tr.error(f"tensor.ap: scalar_offset must be one value, shape (1, 1), not {list(index.shape)}")
    if vector_offset is not None:
        if d != 0:
            raise tr.error(f"tensor.ap: vector_offset indexes dimension 0 only (indirect_dim=0), not {d}")
        rows = flat.shape[0] if flat.dim() else 1
        if math.prod(index.shape) != rows:
            raise tr.error(
                f"tensor.ap: vector_offset holds {math.prod(index.shape)} offsets ({list(index.shape)}) but the "
                f"pattern's leading dimension has {rows}: one offset per row"
            )
    n = math.prod(t.access.buffer.shape)
    view = _from_flat(t, flat.clamp(0, max(n - 1, 0))).access  # stand-in indices for the trace's checks
    ind = Indirect(index.access, int(scale), vector_offset is not None, flat)
    return type(t)(Access(view.buffer, view.arrays, view.shape, indirect=ind))


def slice_(t, dim, start, end, step=1):
    d = _dim(t, dim)
    key = (slice(None),) * d + (slice(start, end, step),)
    return t[key]


def select(t, dim, index):
    d = _dim(t, dim)
    if not isinstance(index, int):  # a run-time index: an SBUF (1, 1) tile
        return _dynamic_select(t, d, index)
    if d == 0 and t.access.buffer.kind.on_chip:  # the partition dimension stays, of size 1
        return slice_(t, 0, index, index + 1)
    return t[(slice(None),) * d + (index,)]


def permute(t, dims):
    dims = [_dim(t, d) for d in dims]
    if t.access.buffer.kind.on_chip and dims[0] != 0:
        raise require("tensor.permute").error(
            f"permute({dims}) would move the partition dimension of an on-chip tensor {list(t.shape)}"
        )
    return _new(t, [a.permute(dims) for a in _full(t)], [t.shape[d] for d in dims])


def broadcast(t, dim, size):
    d = _dim(t, dim)
    if t.shape[d] != 1:
        raise require("tensor.broadcast").error(f"broadcast({dim}, {size}): dimension {d} has size {t.shape[d]}, not 1")
    shape = list(t.shape)
    shape[d] = int(size)
    return _new(t, [a.expand(shape) for a in _full(t)], shape)


def expand_dim(t, dim):
    n = len(t.shape) + 1
    d = dim % n if -n <= dim < n else _dim(t, dim)
    shape = list(t.shape)
    shape.insert(d, 1)
    return _new(t, [a.unsqueeze(d) for a in _full(t)], shape)


def squeeze_dim(t, dim):
    d = _dim(t, dim)
    if t.shape[d] != 1:
        raise require("tensor.squeeze_dim").error(f"squeeze_dim({dim}): dimension {d} has size {t.shape[d]}, not 1")
    shape = list(t.shape)
    del shape[d]
    return _new(t, [a.squeeze(d) for a in _full(t)], shape)


def reshape_view(t, shape):
    """A reshape of any view, in the view's row-major order."""
    shape = [int(s) for s in shape]
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        shape[shape.index(-1)] = math.prod(t.shape) // max(known, 1)
    if math.prod(shape) != math.prod(t.shape):
        raise require("reshape").error(f"cannot reshape {list(t.shape)} to {shape}")
    if t.access.buffer.kind.on_chip and shape[0] != t.shape[0]:
        raise require("reshape").error(
            f"reshaping an on-chip tile keeps its partition dimension: {list(t.shape)} to {shape}"
        )
    return _new(t, [a.reshape(shape) for a in _full(t)], shape)


def reshape_dim(t, dim, shape):
    d = _dim(t, dim)
    new = list(t.shape[:d]) + [int(s) for s in shape] + list(t.shape[d + 1 :])
    return reshape_view(t, new)


def flatten_dims(t, start_dim, end_dim):
    s, e = _dim(t, start_dim), _dim(t, end_dim)
    new = list(t.shape[:s]) + [math.prod(t.shape[s : e + 1])] + list(t.shape[e + 1 :])
    return reshape_view(t, new)


def _dynamic_select(t, d, index):
    """`t.select(d, tile)`: the slice at a run-time index, dimension d removed."""
    tr = require("tensor.select")
    if d == 0 and t.access.buffer.kind.on_chip:
        raise tr.error("tensor.select with a run-time index cannot select the partition dimension of an on-chip tensor")
    st = strides(t)
    pattern = [[s, n] for k, (s, n) in enumerate(zip(st, t.shape)) if k != d]
    return _indirect_at(tr, t, pattern, index, None, d, st[d])


def vector_select(t, dim, vector_offset):
    """`t.vector_select(0, offsets)`: row p of the view is row offsets[p] of t (an HBM tensor)."""
    tr = require("tensor.vector_select")
    d = _dim(t, dim)
    if d != 0:
        raise tr.error(f"tensor.vector_select: only dimension 0 can be selected, not {dim}")
    if t.access.buffer.kind.on_chip:
        raise tr.error(f"tensor.vector_select reads an HBM tensor, not {t.access.buffer.describe()}")
    st = strides(t)
    pattern = [[st[0], math.prod(vector_offset.shape)]] + [[s, n] for s, n in zip(st[1:], t.shape[1:])]
    return _indirect_at(tr, t, pattern, None, vector_offset, 0, st[0])


def _indirect_at(tr, t, pattern, scalar_offset, vector_offset, d, stride):
    """An indirect view of t over `pattern` whose run-time index moves `stride` elements per unit."""
    flat = _pattern_flat(offset(t), pattern, vector_offset is not None)
    return _indirect(tr, t, flat, scalar_offset, vector_offset, d, stride)


def is_indirect(t) -> bool:
    return t.access.indirect is not None

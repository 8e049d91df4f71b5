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
from .access import Access
from .state import require

_I64 = torch.int64


def _full(t) -> list[torch.Tensor]:
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


def _from_flat(t, flat: torch.Tensor):
    buf = t.access.buffer
    n = math.prod(buf.shape)
    if flat.numel() and (int(flat.min()) < 0 or int(flat.max()) >= n):
        raise require("ap").error(
            f"the access pattern reaches element {int(flat.max()) if int(flat.max()) >= n else int(flat.min())} "
            f"of {buf.describe()}, which has {n}"
        )
    arrays = list(torch.unravel_index(flat, tuple(buf.shape))) if buf.shape else []
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
    flat = _flat(t)
    base = int(flat.reshape(-1)[0]) if flat.numel() else 0
    out = []
    for k, s in enumerate(t.shape):
        unit = [0] * len(t.shape)
        unit[k] = 1 if s > 1 else 0
        out.append(int(flat[tuple(unit)]) - base if s > 1 else 0)
    return tuple(out)


def offset(t) -> int:
    flat = _flat(t)
    return int(flat.reshape(-1)[0]) if flat.numel() else 0


def get_pattern(t) -> list:
    return [[s, n] for s, n in zip(strides(t), t.shape)]


def ap(t, pattern, offset=None, scalar_offset=None, vector_offset=None, indirect_dim=0, dtype=None):
    tr = require("tensor.ap")
    if scalar_offset is not None or vector_offset is not None:
        raise _unsupported(tr, "tensor.ap with scalar_offset or vector_offset (indirect access)")
    if dtype is not None and dtype != t.dtype:
        raise _unsupported(tr, "tensor.ap(dtype=...), reinterpreting the storage as another dtype,")
    base = _flat(t).reshape(-1)[0] if t.shape and math.prod(t.shape) else torch.zeros((), dtype=_I64)
    if offset is not None:
        base = base + int(offset)
    counts = [int(n) for _, n in pattern]
    flat = base.clone()
    for k, (stride, n) in enumerate(pattern):
        shape = [1] * len(pattern)
        shape[k] = int(n)
        flat = flat + int(stride) * torch.arange(int(n), dtype=_I64).reshape(shape)
    return _from_flat(t, flat.expand(counts) if pattern else flat)


def slice_(t, dim, start, end, step=1):
    d = _dim(t, dim)
    key = (slice(None),) * d + (slice(start, end, step),)
    return t[key]


def select(t, dim, index):
    d = _dim(t, dim)
    if not isinstance(index, int):
        raise _unsupported(require("tensor.select"), "tensor.select with a tensor index (indirect access)")
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

"""NKI index expressions and the access patterns they make.

An index expression (`nl.arange`, `nl.mgrid`, arithmetic on them, comparisons
for masks) is a concrete integer (or bool) tensor, built while a kernel is
traced: kernel control flow depends only on shapes and Python values, so every
index is known at trace time. Indexing a buffer with such expressions gives an
`Access`: one integer tensor per buffer dimension, broadcast to the access's
shape. At plan time an access that is affine in its output coordinates (every
tutorial's) becomes a strided view (`as_strided`); any other becomes a gather
or scatter with the precomputed indices.

Placement follows NKI: in `x[i_p, i_f]` with `i_p = nl.arange(128)[:, None]`
and `i_f = nl.arange(512)[None, :]` each expression already has the tile's
rank, so a slice among them (`x[i_p, 0:512]`) takes the axis of its position.
"""

from __future__ import annotations

import operator

import torch

from ..errors import NKIError

_I64 = torch.int64


class IndexExpr:
    """An integer (or, after a comparison, boolean mask) index tensor."""

    __slots__ = ("t",)
    __array_priority__ = 1000  # numpy scalars defer to our operators

    def __init__(self, t: torch.Tensor):
        self.t = t

    @property
    def shape(self):
        return tuple(self.t.shape)

    @property
    def ndim(self):
        return self.t.dim()

    def __getitem__(self, key):
        return IndexExpr(self.t[key])

    def _bin(self, other, op, reverse=False):
        o = other.t if isinstance(other, IndexExpr) else other
        if not isinstance(o, (torch.Tensor, int, bool)):
            if hasattr(o, "__index__"):
                o = operator.index(o)
            else:
                return NotImplemented
        return IndexExpr(op(o, self.t) if reverse else op(self.t, o))

    def __add__(self, o):
        return self._bin(o, operator.add)

    def __radd__(self, o):
        return self._bin(o, operator.add, True)

    def __sub__(self, o):
        return self._bin(o, operator.sub)

    def __rsub__(self, o):
        return self._bin(o, operator.sub, True)

    def __mul__(self, o):
        return self._bin(o, operator.mul)

    def __rmul__(self, o):
        return self._bin(o, operator.mul, True)

    def __floordiv__(self, o):
        return self._bin(o, operator.floordiv)

    def __rfloordiv__(self, o):
        return self._bin(o, operator.floordiv, True)

    def __mod__(self, o):
        return self._bin(o, operator.mod)

    def __rmod__(self, o):
        return self._bin(o, operator.mod, True)

    def __lt__(self, o):
        return self._bin(o, operator.lt)

    def __le__(self, o):
        return self._bin(o, operator.le)

    def __gt__(self, o):
        return self._bin(o, operator.gt)

    def __ge__(self, o):
        return self._bin(o, operator.ge)

    def __eq__(self, o):
        return self._bin(o, operator.eq)  # noqa: D105  (elementwise, as in NKI)

    def __ne__(self, o):
        return self._bin(o, operator.ne)

    def __and__(self, o):
        return self._bin(o, operator.and_)

    def __rand__(self, o):
        return self._bin(o, operator.and_, True)

    def __or__(self, o):
        return self._bin(o, operator.or_)

    def __ror__(self, o):
        return self._bin(o, operator.or_, True)

    def __invert__(self):
        return IndexExpr(~self.t)

    def __neg__(self):
        return IndexExpr(-self.t)

    __hash__ = None

    def __repr__(self):
        return f"IndexExpr(shape={self.shape})"


def broadcast_shapes(*shapes) -> tuple:
    """NumPy broadcasting of shapes (torch.broadcast_shapes is slow for the trace's many small calls)."""
    n = max((len(s) for s in shapes), default=0)
    out = [1] * n
    for s in shapes:
        s = tuple(s)
        for i, d in enumerate(s, n - len(s)):
            if d != 1:
                if out[i] not in (1, d):
                    raise RuntimeError(f"shapes {[list(x) for x in shapes]} do not broadcast")
                out[i] = d
    return tuple(out)


def arange(start, stop=None, step=1) -> IndexExpr:
    if stop is None:
        start, stop = 0, start
    return IndexExpr(torch.arange(int(start), int(stop), int(step), dtype=_I64))


class _Grid(tuple):
    """What `nl.mgrid[...]` returns: one expression per axis, also as `.p` (the
    partition axis) and `.x`, `.y`, `.z` (the free axes)."""

    @property
    def p(self):
        return self[0]

    @property
    def x(self):
        return self[1]

    @property
    def y(self):
        return self[2]

    @property
    def z(self):
        return self[3]


class _MGrid:
    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        n = len(key)
        out = []
        for axis, s in enumerate(key):
            if not isinstance(s, slice):
                raise NKIError(f"nl.mgrid takes slices such as nl.mgrid[0:128, 0:512], not {s!r}")
            t = torch.arange(s.start or 0, s.stop, s.step or 1, dtype=_I64)
            shape = [1] * n
            shape[axis] = -1
            out.append(IndexExpr(t.reshape(shape)))
        return _Grid(out)


mgrid = _MGrid()


def ds(start, size) -> slice:
    """`nl.ds(start, size)`: the slice start:start+size."""
    return slice(int(start), int(start) + int(size))


def _entry_kind(e):
    if isinstance(e, IndexExpr):
        return "expr"
    if isinstance(e, slice):
        return "slice"
    if isinstance(e, (int, torch.SymInt)) or hasattr(e, "__index__"):
        return "int"
    raise NKIError(
        f"cannot index an NKI tensor with {e!r} ({type(e).__name__}): use ints, slices, nl.ds, "
        f"nl.arange or nl.mgrid expressions"
    )


def index_arrays(shape: tuple, key) -> tuple[list[torch.Tensor], tuple]:
    """Index tensors (one per dimension of `shape`) for `x[key]`, and the
    resulting tile shape. Raises NKIError for indices out of bounds."""
    key = key if isinstance(key, tuple) else (key,)
    if any(k is Ellipsis for k in key):
        i = next(i for i, k in enumerate(key) if k is Ellipsis)
        fill = len(shape) - (len(key) - 1)
        key = key[:i] + (slice(None),) * fill + key[i + 1 :]
    if len(key) > len(shape):
        raise NKIError(f"too many indices ({len(key)}) for a tensor of shape {tuple(shape)}")
    key = key + (slice(None),) * (len(shape) - len(key))
    kinds = [_entry_kind(k) for k in key]
    exprs = [k.t for k, kind in zip(key, kinds) if kind == "expr"]
    rank = sum(kind != "int" for kind in kinds)
    positional = not exprs or max(e.dim() for e in exprs) == rank
    if exprs and not positional and "slice" in kinds:
        raise NKIError(
            "mixing slices with index expressions needs expressions of the tile's rank "
            "(nl.arange(n)[:, None] and nl.arange(m)[None, :]), not 1-D ones"
        )
    arrays = []
    pos = 0
    for dim, (k, kind) in enumerate(zip(key, kinds)):
        n = shape[dim]
        if kind == "int":
            i = operator.index(k)
            if not -n <= i < n:
                raise NKIError(f"index {i} is out of bounds for dimension {dim} of size {n}")
            arrays.append(torch.tensor(i % n, dtype=_I64))
            continue
        if kind == "slice":
            start, stop, step = k.indices(n)
            if k.stop is not None and k.stop > n and step > 0:
                raise NKIError(f"slice {k.start}:{k.stop} is out of bounds for dimension {dim} of size {n}")
            t = torch.arange(start, stop, step, dtype=_I64)
            view = [1] * rank
            view[pos] = -1
            arrays.append(t.reshape(view))
        else:
            arrays.append(k.t.to(_I64))
        pos += 1
    out_shape = broadcast_shapes(*(a.shape for a in arrays))
    return arrays, out_shape


def check_bounds(arrays, shape, mask=None, what="tensor"):
    for dim, a in enumerate(arrays):
        if a.numel() == 0:
            continue
        vals = a if mask is None else torch.where(mask, a, torch.zeros((), dtype=_I64))
        lo, hi = int(vals.min()), int(vals.max())
        if lo < 0 or hi >= shape[dim]:
            raise NKIError(
                f"{what}: index {lo if lo < 0 else hi} is out of bounds for dimension {dim} "
                f"of size {shape[dim]} (mask the access, e.g. mask=(i_p < n))"
            )


def compose(arrays, shape, key, identity=False):
    """Index tensors of `tile[key]` where `tile` is itself an access with
    `arrays` (over its `shape`) into a buffer."""
    sub, out_shape = index_arrays(shape, key)
    if identity is not None and identity:
        return sub, out_shape  # indexing a whole tensor: stays lazy, bounds are checked under the op's mask
    full = [a.expand(shape) for a in arrays]
    bad = torch.zeros((), dtype=torch.bool)
    clamped = []
    for s, n in zip(sub, shape):
        bad = bad | (s < 0) | (s >= n)
        clamped.append(s.clamp(0, max(n - 1, 0)))
    out = [f[tuple(clamped)] for f in full]
    if bool(bad.any()):  # out of range of the tile: -1 fails the bounds check unless masked out
        out = [torch.where(bad.expand(out_shape), -1, o.expand(out_shape)) for o in out]
    return out, out_shape


def affine(arrays, shape):
    """(offsets, coefficients) with index_d = offsets[d] + sum_k coeff[d][k] * o_k
    over output coordinates o, or None if some index is not affine. Each
    array is checked over its own (broadcast) extent, never expanded."""
    n = len(shape)
    offsets, coeffs = [], []
    for a in arrays:
        if a.dim() > n:
            return None
        e = a.reshape((1,) * (n - a.dim()) + tuple(a.shape))
        if any(s == 0 for s in shape) or e.numel() == 0:
            offsets.append(0)
            coeffs.append([0] * n)
            continue
        c = int(e.reshape(-1)[0])
        row = [0] * n
        for k in range(n):
            if e.shape[k] > 1:
                unit = [0] * n
                unit[k] = 1
                row[k] = int(e[tuple(unit)]) - c
        if e.numel() > 1:
            rebuilt = torch.full((), c, dtype=_I64)
            for k in range(n):
                if row[k]:
                    rebuilt = rebuilt + row[k] * torch.arange(e.shape[k], dtype=_I64).reshape(
                        [-1 if i == k else 1 for i in range(n)]
                    )
            if not torch.equal(rebuilt.expand(e.shape), e):
                return None
        offsets.append(c)
        coeffs.append(row)
    return offsets, coeffs


def affine_bounds(offsets, coeffs, shape):
    """(min, max) of each affine index over the output extent."""
    out = []
    for c, row in zip(offsets, coeffs):
        lo = hi = c
        for k, a in enumerate(row):
            span = a * (shape[k] - 1)
            lo, hi = lo + min(0, span), hi + max(0, span)
        out.append((lo, hi))
    return out


def strided(t: torch.Tensor, offsets, coeffs, shape) -> torch.Tensor:
    """The view of t (any strides) that an affine access selects."""
    st = t.stride()
    stride = [sum(coeffs[d][k] * st[d] for d in range(len(st))) for k in range(len(shape))]
    return t.as_strided(shape, stride, t.storage_offset() + sum(o * s for o, s in zip(offsets, st)))


def identity_arrays(shape):
    n = len(shape)
    return [torch.arange(s, dtype=_I64).reshape([-1 if i == k else 1 for i in range(n)]) for k, s in enumerate(shape)]

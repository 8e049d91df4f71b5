"""Tiles as a kernel sees them while it is traced.

An `Access` is a region of a `Buffer`: one index tensor per buffer dimension
(indexing.py), broadcast to the access's shape, plus an optional mask of the
elements an instruction touches. A `Tile` is what kernel code holds: a kernel
argument, `nl.ndarray(...)`, the result of `nl.load` or of any operation, or
an indexed part of one of those; it carries an access and supports NumPy-like
operators, indexing and assignment (each records instructions on the trace).
"""

from __future__ import annotations

import torch

from . import indexing
from .errors import NKIError


class Access:
    __slots__ = ("buffer", "arrays", "shape", "mask", "identity", "_affine")

    def __init__(self, buffer, arrays, shape, mask=None, identity=False):
        self.buffer, self.arrays, self.shape, self.mask = buffer, arrays, tuple(shape), mask
        self.identity = identity  # the whole buffer, unindexed
        self._affine = 0  # not computed yet

    def affine(self):
        """(offsets, coefficients) when the access is a strided view, else None."""
        if self._affine == 0:
            self._affine = indexing.affine(self.arrays, self.shape)
        return self._affine

    @classmethod
    def whole(cls, buffer):
        return cls(buffer, indexing.identity_arrays(buffer.shape), buffer.shape, identity=True)

    def __getitem__(self, key):
        arrays, shape = indexing.compose(self.arrays, self.shape, key, self.identity)
        return Access(self.buffer, arrays, shape)

    def restrict(self, box):
        """The sub-access over `box` (one slice per dimension of the
        instruction's shape); dimensions this access broadcasts stay size 1."""
        shape = (1,) * (len(box) - len(self.shape)) + self.shape
        key = tuple(b if s != 1 else slice(0, 1) for b, s in zip(box, shape))
        arrays = [a.expand(shape)[key] for a in self.arrays]
        return Access(self.buffer, arrays, tuple(b.stop - b.start if s != 1 else 1 for b, s in zip(key, shape)))

    def masked(self, mask):
        return Access(self.buffer, self.arrays, self.shape, mask)

    def transposed(self) -> Access:
        """The 2-D access with its two axes swapped."""
        arrays = [a.expand(self.shape).transpose(0, 1) for a in self.arrays]
        return Access(self.buffer, arrays, (self.shape[1], self.shape[0]))

    def gather(self, t: torch.Tensor) -> torch.Tensor:
        """The elements of `t` (a tensor shaped like the buffer) this access
        reads: a view when the access is affine and unmasked."""
        aff = self.affine() if self.mask is None else None
        if aff is not None:
            return indexing.strided(t, aff[0], aff[1], self.shape)
        arrays = self.arrays
        if self.mask is not None:
            arrays = [torch.where(self.mask.expand(self.shape), a.expand(self.shape), 0) for a in arrays]
        return t[tuple(arrays)].expand(self.shape)

    def scatter(self, t: torch.Tensor, value: torch.Tensor):
        aff = self.affine() if self.mask is None else None
        if aff is not None:
            indexing.strided(t, aff[0], aff[1], self.shape).copy_(value)
            return
        idx = [a.expand(self.shape) for a in self.arrays]
        if self.mask is not None:
            m = self.mask.expand(self.shape)
            idx = [i[m] for i in idx]
            value = value.expand(self.shape)[m] if value.dim() else value
        t.index_put_(tuple(idx), value)

    def check_bounds(self, what: str):
        aff = self.affine() if self.mask is None else None
        if aff is not None:
            for dim, (lo, hi) in enumerate(indexing.affine_bounds(aff[0], aff[1], self.shape)):
                n = self.buffer.shape[dim]
                if (lo < 0 or hi >= n) and all(s > 0 for s in self.shape):
                    raise NKIError(
                        f"{what} of {self.buffer.describe()}: index {lo if lo < 0 else hi} is out of "
                        f"bounds for dimension {dim} of size {n} (mask the access, e.g. mask=(i_p < n))"
                    )
            return
        mask = None if self.mask is None else self.mask.expand(self.shape)
        indexing.check_bounds(
            [a.expand(self.shape) for a in self.arrays],
            self.buffer.shape,
            mask,
            what=f"{what} of {self.buffer.describe()}",
        )

    def is_whole(self) -> bool:
        if self.identity:
            return True
        if self.shape != self.buffer.shape or self.mask is not None:
            return False
        aff = self.affine()
        if aff is None:
            return False
        offsets, coeffs = aff
        return all(o == 0 for o in offsets) and all(
            row[k] == (1 if k == d else 0) or self.shape[k] == 1
            for d, row in enumerate(coeffs)
            for k in range(len(row))
        )


class Tile:
    """A tile or tensor inside a traced kernel."""

    __slots__ = ("access", "producer", "used", "updated", "__weakref__")
    __array_priority__ = 1000

    def __init__(self, access: Access, producer=None):
        self.access = access
        self.producer = producer  # the Instr that made this temporary, until something reads it
        self.used = False
        self.updated = None  # the instruction of `t[...] += x`: Python's store-back `t[...] = t` right after is no copy
        access.buffer.tiles += 1

    def __del__(self):
        # the kernel can no longer name this buffer once no tile refers to it: drop its trace-time state
        buf = self.access.buffer
        buf.tiles -= 1
        if buf.tiles == 0 and buf.children == 0:
            buf.stamps = buf.poison = None

    # NumPy-like attributes
    @property
    def shape(self):
        return self.access.shape

    @property
    def dtype(self):
        return self.access.buffer.dtype

    @property
    def ndim(self):
        return len(self.access.shape)

    @property
    def buffer(self):
        return self.access.buffer.kind

    @property
    def name(self):
        return self.access.buffer.name

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return f"Tile({list(self.shape)}, {str(self.dtype).replace('torch.', '')}, {self.buffer.name})"

    def __getitem__(self, key):
        return Tile(self.access[key])

    def __setitem__(self, key, value):
        from . import language

        language._assign(self[key], value)

    def __bool__(self):
        raise NKIError(
            "a tile's values are not known while a kernel is traced: Python `if`/`while` on tile "
            "data is not allowed (use nl.where or a mask)"
        )

    def __iter__(self):
        raise NKIError("iterating over a tile is not supported: index it with nl.arange / slices")

    def reshape(self, *shape):
        from . import language

        return language._reshape(self, shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape)

    def view(self, dtype):
        raise NKIError("reinterpreting a tile as another dtype (tile.view) is not supported yet")

    def broadcast_to(self, shape):
        from . import language

        return language.broadcast_to(self, shape)

    def __array__(self, *a, **k):
        raise NKIError("a traced tile cannot become a NumPy array inside a kernel")

    def _op(name, reverse=False):  # noqa: N805
        def method(self, other):
            from . import language

            fn = getattr(language, name)
            return fn(other, self) if reverse else fn(self, other)

        return method

    __add__ = _op("add")
    __radd__ = _op("add", True)
    __sub__ = _op("subtract")
    __rsub__ = _op("subtract", True)
    __mul__ = _op("multiply")
    __rmul__ = _op("multiply", True)
    __truediv__ = _op("divide")
    __rtruediv__ = _op("divide", True)
    __pow__ = _op("power")
    __rpow__ = _op("power", True)
    __matmul__ = _op("matmul")
    __lt__ = _op("less")
    __le__ = _op("less_equal")
    __gt__ = _op("greater")
    __ge__ = _op("greater_equal")
    __eq__ = _op("equal")
    __ne__ = _op("not_equal")
    __and__ = _op("bitwise_and")
    __or__ = _op("bitwise_or")
    __xor__ = _op("bitwise_xor")
    __hash__ = object.__hash__

    def __neg__(self):
        from . import language

        return language.negative(self)

    def __abs__(self):
        from . import language

        return language.abs(self)

    def _iop(name):  # noqa: N805
        def method(self, other):
            from . import language

            language._inplace(name, self, other)
            return self

        return method

    __iadd__ = _iop("add")
    __isub__ = _iop("subtract")
    __imul__ = _iop("multiply")
    __itruediv__ = _iop("divide")
    del _op, _iop

    @property
    def T(self):  # noqa: N802
        from . import language

        return language.transpose(self)

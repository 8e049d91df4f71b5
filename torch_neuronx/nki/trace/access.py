"""A region of a buffer: what an instruction reads or writes.

An `Access` holds one index tensor per dimension of its `Buffer` (indexing.py),
broadcast to the access's shape, and an optional mask of the elements an
instruction touches. It gathers and scatters those elements of any tensor
shaped like the buffer (the trace's stamps and poison, the cost model's
times); an access that is affine in its coordinates does so through a strided
view.

An indirect access (`tensor.ap(scalar_offset=...)` or `vector_offset=`) also
carries an `Indirect`: its start along one dimension of the tensor is read at
run time from an SBUF tile. Its index tensors then hold the elements at
offset 0, a stand-in for the trace's checks; the executor computes the real
ones per call (executor/indirect.py).
"""

from __future__ import annotations

import torch

from ..errors import NKIError, NKIUnsupported
from . import indexing


class Indirect:
    """A run-time start: element i of the access reads storage element
    `flat[i] + offset * scale`, where `offset` is the value of the SBUF tile
    `index` (one value; or, `vector`, one per index along the access's first
    dimension) and `scale` the elements to the right of the indirect
    dimension of the tensor `.ap` was called on."""

    __slots__ = ("index", "scale", "vector", "flat")

    def __init__(self, index: Access, scale: int, vector: bool, flat: torch.Tensor):
        self.index, self.scale, self.vector, self.flat = index, scale, vector, flat


class Access:
    __slots__ = ("buffer", "arrays", "shape", "mask", "identity", "_affine", "indirect")

    def __init__(self, buffer, arrays, shape, mask=None, identity=False, indirect=None):
        self.buffer, self.arrays, self.shape, self.mask = buffer, arrays, tuple(shape), mask
        self.identity = identity  # the whole buffer, unindexed
        self.indirect = indirect
        self._affine = None if indirect is not None else 0  # 0: not computed yet; an indirect access is never a view

    def _direct(self, what: str):
        if self.indirect is not None:
            raise NKIUnsupported(
                f"{what} of an indirect view (tensor.ap with scalar_offset/vector_offset) is not supported by the "
                f"NKI emulator yet: index the tensor before .ap(), or give .ap() the whole pattern"
            )

    def affine(self):
        """(offsets, coefficients) when the access is a strided view, else None."""
        if self._affine == 0:
            self._affine = indexing.affine(self.arrays, self.shape)
        return self._affine

    @classmethod
    def whole(cls, buffer):
        return cls(buffer, indexing.identity_arrays(buffer.shape), buffer.shape, identity=True)

    def __getitem__(self, key):
        if self.indirect is not None and _selects_all(key, len(self.shape)):
            return self
        self._direct("indexing")
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
        self._direct("a mask")
        return Access(self.buffer, self.arrays, self.shape, mask)

    def transposed(self) -> Access:
        """The 2-D access with its two axes swapped."""
        self._direct("transposing")
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
            # an axis no index moves along (a broadcast view) names each element several times: the last wins
            rep = [k for k, n in enumerate(self.shape) if n > 1 and not any(row[k] for row in aff[1])]
            if not rep:
                indexing.strided(t, aff[0], aff[1], self.shape).copy_(value)
                return
            view = indexing.strided(t, aff[0], aff[1], self.shape)
            key = tuple(slice(-1, None) if k in rep else slice(None) for k in range(len(self.shape)))
            view[key].copy_(torch.as_tensor(value).expand(self.shape)[key])
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


def _selects_all(key, ndim: int) -> bool:
    """`t[...]`, `t[:, :]`: a key that keeps every element in place."""
    key = key if isinstance(key, tuple) else (key,)
    if key == (Ellipsis,):
        return True
    return len(key) <= ndim and all(isinstance(k, slice) and k == slice(None) for k in key)

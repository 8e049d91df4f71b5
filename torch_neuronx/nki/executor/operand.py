"""An operand of a plan's step: one access of a traced instruction (trace/access.py),
bound to the tensors of a call.

An access that is affine in its tile coordinates is a strided view
(`as_strided`) of its buffer: built once for on-chip buffers (`bind_const`),
per call for HBM ones (their tensors change). Any other access is a gather
(read) or `index_put_` (write) with precomputed indices; a masked write
scatters only the elements its mask selects. A result of lower rank than its
destination keeps its first axis on the partitions ((P,) is written as (P, 1)).
`Operand.affine_view` builds one directly from a buffer id and an affine
layout (the batched operands of fuse.py).
"""

from __future__ import annotations

import torch


class Operand:
    """One read or write of a step: a strided view of its buffer's tensor, or indices into it."""

    __slots__ = (
        "id",
        "root",
        "shape",
        "affine",
        "idx",
        "mask",
        "const",
        "_stride",
        "_offset",
        "strides",
        "dtype",
        "cache_key",
        "repeats",
    )

    def __init__(self, access):
        buf = access.buffer
        self.id = buf.id
        self.root = buf.root().id
        self.shape = access.shape
        self.dtype = buf.dtype
        self.mask = None if access.mask is None else access.mask.expand(access.shape).contiguous()
        arrays = access.arrays
        if self.mask is not None:  # masked-out elements may index out of bounds: point them at 0
            arrays = [torch.where(self.mask, a.expand(self.shape), 0) for a in arrays]
        self.affine = access.affine() if self.mask is None else None
        self.idx = None if self.affine else tuple(a.expand(self.shape).contiguous() for a in arrays)
        self.const = None
        self._stride = None
        self.cache_key = None  # set by the plan when the operand reads an HBM tensor the kernel never writes
        self.repeats = _repeats(self.affine, self.shape)

    @classmethod
    def affine_view(cls, buffer_id, dtype, shape, offsets, coeffs) -> Operand:
        """An unmasked operand over buffer `buffer_id` with index_d = offsets[d] + sum_k coeffs[d][k] * o_k."""
        op = cls.__new__(cls)
        op.id, op.dtype, op.mask, op.idx, op.const, op._stride, op.cache_key = (
            buffer_id,
            dtype,
            None,
            None,
            None,
            None,
            None,
        )
        op.shape, op.affine = tuple(shape), (offsets, coeffs)
        op.root, op.repeats = buffer_id, _repeats(op.affine, op.shape)
        return op

    def fp32(self, env, t):
        """t (this operand's value) in fp32; a read-only HBM view converts once per call."""
        if t.dtype == torch.float32:
            return t
        if self.cache_key is None:
            return t.float()
        cache = env[-1]
        c = cache.get(self.cache_key)
        if c is None:
            c = cache[self.cache_key] = t.float()
        return c

    def bind_const(self, base: torch.Tensor):
        """Fixes the view when the buffer's tensor never changes (on-chip)."""
        if self.affine is not None:
            self.const = self._view(base)

    def _view(self, base):
        st = base.stride()
        if st != self._stride:  # strides are fixed per plan (they are in its signature): computed once
            offsets, coeffs = self.affine
            self._offset = sum(o * s for o, s in zip(offsets, st))
            self._stride = st
            self.strides = [sum(coeffs[d][k] * st[d] for d in range(len(st))) for k in range(len(self.shape))]
        return base.as_strided(self.shape, self.strides, base.storage_offset() + self._offset)

    def view(self, env):
        """The destination view of an affine, unmasked operand."""
        return self.const if self.const is not None else self._view(env[self.id])

    def get(self, env):
        if self.const is not None:
            return self.const
        base = env[self.id]
        if self.affine is not None:
            return self._view(base)
        return base[self.idx]

    def _aligned(self, value):
        if isinstance(value, torch.Tensor) and 0 < value.dim() < len(self.shape):
            return value.reshape(tuple(value.shape) + (1,) * (len(self.shape) - value.dim()))  # (P,) is (P, 1)
        return value

    def put(self, env, value):
        value = self._aligned(value)
        if self.affine is not None:
            view = self.const if self.const is not None else self._view(env[self.id])
            if self.repeats is not None:  # a broadcast destination names elements several times: the last wins
                view, value = view[self.repeats], torch.as_tensor(value).expand(self.shape)[self.repeats]
            if (
                isinstance(value, torch.Tensor)
                and value.untyped_storage().data_ptr() == view.untyped_storage().data_ptr()
            ):
                value = value.clone()  # a view of the destination's own storage (an in-place shift or copy)
            view.copy_(value)
            return
        base = env[self.id]
        if self.mask is not None:
            idx = tuple(i[self.mask] for i in self.idx)
            value = torch.as_tensor(value).to(base.dtype).expand(self.shape)[self.mask]
            base.index_put_(idx, value)
        else:
            base.index_put_(self.idx, torch.as_tensor(value).to(base.dtype).expand(self.shape))

    def acc(self, env, value):
        """Adds value into the operand (PSUM accumulation, `+=`)."""
        value = self._aligned(value)
        if self.affine is not None and self.repeats is None:
            view = self.const if self.const is not None else self._view(env[self.id])
            if view.dtype == torch.float32 and value.dtype == torch.float32:
                view.add_(value)
            else:
                view.copy_(view.float() + value.float())
            return
        self.put(env, self.get(env).float() + value.float())


def _repeats(affine, shape):
    """The key narrowing an affine view to one element per storage location
    (the last along each axis no index moves along), or None when every
    element is its own location."""
    if affine is None:
        return None
    rep = [k for k, n in enumerate(shape) if n > 1 and not any(row[k] for row in affine[1])]
    if not rep:
        return None
    return tuple(slice(-1, None) if k in rep else slice(None) for k in range(len(shape)))

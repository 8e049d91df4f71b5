"""An operand whose start is read at run time: the plan's form of an
indirect access (`tensor.ap(scalar_offset=/vector_offset=)`,
`tensor.select(d, tile)`, `tensor.vector_select`; trace/access.py `Indirect`).

Each call reads the offsets from their SBUF tile, adds `offset * scale` to
the storage index of each element (per row for a vector offset) and gathers
or scatters those elements of the buffer's tensor. An element outside the
tensor raises, naming the offset, unless the instruction skips such elements
(`oob_mode=skip`: reads leave the destination's element as it was, writes
drop it; `valid` holds what the last `get` found in bounds).
"""

from __future__ import annotations

import math

import torch

from ..errors import NKIError


class IndirectOperand:
    __slots__ = ("id", "root", "shape", "dtype", "flat", "scale", "vector", "index", "skip", "valid", "what", "_dims")
    affine = mask = const = cache_key = repeats = None

    def __init__(self, access, index, skip: bool = False):
        ind = access.indirect
        self.id, self.shape, self.dtype = access.buffer.id, tuple(access.shape), access.buffer.dtype
        self.root = access.buffer.root().id
        self.flat, self.scale, self.vector = ind.flat, ind.scale, ind.vector
        self.index = index  # the Operand of the offsets' tile
        self.skip = skip
        self.valid = None
        self.what = access.buffer.describe()
        self._dims = tuple(access.buffer.shape)

    def _addresses(self, env):
        """(storage index of each element, mask of those in bounds or None when all are)."""
        off = self.index.get(env).reshape(-1).to(torch.int64)
        if self.vector:
            off = off.reshape((-1,) + (1,) * (len(self.shape) - 1))
        else:
            off = off[0]
        flat = self.flat + off * self.scale
        n = math.prod(self._dims)
        ok = (flat >= 0) & (flat < n)
        if bool(ok.all()):
            return flat, None
        if not self.skip:
            bad = flat[~ok][0]
            offs = off.reshape(-1)
            raise NKIError(
                f"an indirect access of {self.what} reaches element {int(bad)} of {n} (run-time offsets "
                f"{offs[:8].tolist()}{' ...' if offs.numel() > 8 else ''} x {self.scale} elements): keep the "
                f"offsets in range, or pass oob_mode=nisa.oob_mode.skip to drop such elements"
            )
        return flat.clamp(0, n - 1), ok

    def _index(self, flat):
        return torch.unravel_index(flat, self._dims) if self._dims else ()

    def get(self, env):
        flat, self.valid = self._addresses(env)
        return env[self.id][self._index(flat)]

    def fp32(self, env, t):
        return t.float()

    def put(self, env, value):
        flat, ok = self._addresses(env)
        base = env[self.id]
        value = torch.as_tensor(value).to(base.dtype).expand(self.shape)
        if ok is not None:
            flat, value = flat[ok], value[ok]
        base.index_put_(self._index(flat), value)

    def acc(self, env, value):
        """Adds value in fp32, once per element reached (twice where two
        offsets reach it, as DMA's read-modify-write does)."""
        flat, ok = self._addresses(env)
        base = env[self.id]
        value = torch.as_tensor(value).float().expand(self.shape)
        if ok is not None:
            flat, value = flat[ok], value[ok]
        total = base if base.dtype == torch.float32 else base.float()
        total.index_put_(self._index(flat), value, accumulate=True)
        if total is not base:
            base.copy_(total)


class SkippedReads:
    """The destination of an instruction whose indirect source skips
    out-of-bounds elements: where the source's last `get` found an element
    out of bounds, the destination keeps what it held."""

    __slots__ = ("out", "src")
    affine = mask = const = cache_key = repeats = None

    def __init__(self, out, src: IndirectOperand):
        self.out, self.src = out, src

    def __getattr__(self, name):
        return getattr(self.out, name)

    def get(self, env):
        return self.out.get(env)

    def put(self, env, value):
        valid = self.src.valid
        if valid is not None:
            old = self.out.get(env)
            value = torch.where(valid.reshape(old.shape), torch.as_tensor(value).to(old.dtype), old)
        self.out.put(env, value)

    def acc(self, env, value):
        valid = self.src.valid
        if valid is not None:
            value = torch.where(valid.reshape(self.out.shape), torch.as_tensor(value).float(), 0.0)
        self.out.acc(env, value)

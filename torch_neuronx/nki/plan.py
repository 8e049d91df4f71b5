"""A traced kernel as a replayable plan.

The plan holds one closure per instruction and the tensors of the on-chip
buffers. On-chip buffers share storage where their live ranges do not overlap
(same shape and dtype), so a plan holds about as much memory as the kernel's
peak of live tiles. A call binds the HBM buffers (the kernel's tensor
arguments, its outputs and HBM scratch) and runs the closures in trace order:
every tile operation is one vectorised PyTorch call on whole tiles.

Operands: an access that is affine in its tile coordinates is a strided view
(`as_strided`) of its buffer: built once for on-chip buffers, per call for HBM
ones (their tensors change). Any other access is a gather (read) or
`index_put_` (write) with precomputed indices; a masked write scatters only
the elements its mask selects. A result of lower rank than its destination
keeps its first axis on the partitions ((P,) is written as (P, 1)).
"""

from __future__ import annotations

import threading

import torch

from . import fuse
from .trace import Trace


class Operand:
    __slots__ = ("id", "shape", "affine", "idx", "mask", "const", "_stride", "_offset", "strides", "dtype", "cache_key")

    def __init__(self, access):
        buf = access.buffer
        self.id = buf.id
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
        if self.affine is not None:
            view = self.const if self.const is not None else self._view(env[self.id])
            if view.dtype == torch.float32 and value.dtype == torch.float32:
                view.add_(value)
            else:
                view.copy_(view.float() + value.float())
            return
        self.put(env, self.get(env).float() + value.float())


class Plan:
    """The replayable form of one trace."""

    def __init__(self, trace: Trace, outputs):
        self.kernel_name = trace.kernel_name
        self.target = trace.target
        self.outputs = outputs  # pytree of Buffer (returned HBM tensors)
        self.buffers = trace.buffers
        self.lock = threading.Lock()
        self.args = [b for b in trace.buffers if b.role == "arg" and b.parent is None]
        self.aliases = [b for b in trace.buffers if b.parent is not None and b.role != "alias"]
        self.fresh = [b for b in trace.buffers if b.role in ("out", "scratch") and b.parent is None]
        self.base_env: list = [None] * len(trace.buffers)
        self.instrs, self.forwarded = fuse.optimize(trace.instrs)
        self.written = {a.buffer.root().id for ins in self.instrs for a in ins.writes}
        self.onchip_bytes = self._allocate_onchip(trace)
        self.steps = []
        for ins in self.instrs:
            rd = [self._operand(a) for a in ins.reads]
            wr = [self._operand(a) for a in ins.writes]
            if getattr(ins, "forward", False):
                self.steps.append(fuse.bind_step(rd, wr, False))
                continue
            ops = getattr(ins, "operands", None)
            if ops is not None and ins.name in fuse.MATMULS:  # a merged matmul chain: (stationary, moving)
                rd = [self._keyed(op) for op in ops] + rd[2:]
            elif ops is not None:  # batched repeats: (reads, writes)
                rd, wr = ops
            self.steps.append(ins.step(rd, wr, ins.accumulate))

    def _allocate_onchip(self, trace) -> int:
        """Gives each on-chip buffer a tensor, reusing the tensor of a buffer
        of the same shape and dtype whose last use came before."""
        free: dict = {}
        ending = []
        total = 0
        onchip = sorted(
            (b for b in trace.buffers if b.role == "onchip" and b.id not in self.forwarded), key=lambda b: b.alloc_seq
        )
        for b in onchip:
            ending.sort(key=lambda e: e[0])
            while ending and ending[0][0] < b.alloc_seq:
                _, key, t = ending.pop(0)
                free.setdefault(key, []).append(t)
            key = (b.shape, b.dtype)
            pool = free.get(key)
            t = pool.pop() if pool else None
            if t is None:
                t = torch.empty(b.shape, dtype=b.dtype)
                total += t.numel() * t.element_size()
            self.base_env[b.id] = t
            ending.append((b.last_use, key, t))
        for b in trace.buffers:  # reshaped tiles: views of their parent's tensor
            if b.role == "alias":
                self.base_env[b.id] = self.base_env[b.parent.id].view(b.shape)
        return total

    def _operand(self, access) -> Operand:
        op = Operand(access)
        if access.buffer.role in ("onchip", "alias") and access.buffer.id not in self.forwarded:
            op.bind_const(self.base_env[access.buffer.id])
        return self._keyed(op)

    def _keyed(self, op: Operand) -> Operand:
        """Gives an operand over an HBM tensor the kernel never writes a key
        under which a call keeps its fp32 conversion (matmuls reuse blocks)."""
        root = self.buffers[op.id].root()
        if op.affine is not None and not root.kind.on_chip and root.id not in self.written:
            offsets, coeffs = op.affine
            op.cache_key = (op.id, tuple(offsets), tuple(tuple(r) for r in coeffs), tuple(op.shape))
        return op

    def bind(self, args: list, new_tensor) -> list:
        """The environment of one call: `args` are the host tensors of the
        kernel's tensor arguments (by argument index); `new_tensor(buffer)`
        makes the host tensor of an output or scratch buffer."""
        env = list(self.base_env)
        for b in self.args:
            env[b.id] = args[b.index]
        for b in self.fresh:
            env[b.id] = new_tensor(b)
        for b in self.aliases:
            parent = env[b.parent.id]
            try:
                env[b.id] = parent.view(b.shape)
            except RuntimeError as e:
                from .errors import NKIError

                raise NKIError(
                    f"{b.describe()}: reshaping a {list(parent.shape)} tensor with strides "
                    f"{list(parent.stride())} needs a copy; pass a contiguous tensor"
                ) from e
        env.append({})  # env[-1]: this call's fp32 conversions of read-only HBM views (Operand.fp32)
        return env

    def run(self, env):
        with self.lock:
            i = 0
            try:
                for i, step in enumerate(self.steps):  # noqa: B007  (i names the failing step below)
                    step(env)
            except Exception as e:
                ins = self.instrs[i]
                raise RuntimeError(f"NKI kernel '{self.kernel_name}': {ins.name} at {ins.line} failed: {e}") from e

"""A traced kernel as a replayable plan.

The plan holds one closure per instruction and the tensors of the on-chip
buffers. On-chip buffers share storage where their live ranges do not overlap
(same shape and dtype), so a plan holds about as much memory as the kernel's
peak of live tiles. A call binds the HBM buffers (the kernel's tensor
arguments, its outputs and HBM scratch) and runs the closures in trace order:
every tile operation is one vectorised PyTorch call on whole tiles, over the
operands of operand.py. fuse.py rewrites the instructions first.
"""

from __future__ import annotations

import threading

import torch

from ..errors import NKIError
from ..trace.state import Trace
from . import fuse, loops, programs
from .indirect import IndirectOperand, SkippedReads
from .operand import Operand
from .sentinels import fill_sentinel


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
        # an LNC=2 launch whose programs meet runs them at once (programs.py): each core's instructions
        # rewritten on their own, its steps a range of self.steps
        self.core_steps = None
        self.cores_apart = len({ins.core for ins in trace.instrs}) > 1  # the cores' programs interleave when they run
        # forwarding tiles to HBM views would reach into dynamic loops' bodies: none where there are such loops
        forward = not any(ins.name == "loop_begin" for ins in trace.instrs)
        if any(ins.sync is not None for ins in trace.instrs):
            self.instrs, self.forwarded, self.core_steps = [], set(), []
            for c in (0, 1):
                instrs, forwarded = fuse.optimize([ins for ins in trace.instrs if ins.core == c], forward)
                self.core_steps.append(range(len(self.instrs), len(self.instrs) + len(instrs)))
                self.instrs += instrs
                self.forwarded |= forwarded
        elif len({ins.core for ins in trace.instrs}) > 1 and forward:
            # an LNC=2 launch whose programs do not meet: one list, each core's instructions in its own
            # order, interleaved by when the cost model starts them, so the cores progress as on the chip
            # (both zero a shared output before either stores into it)
            per_core = [fuse.optimize([ins for ins in trace.instrs if ins.core == c]) for c in (0, 1)]
            self.instrs = _interleave(per_core[0][0], per_core[1][0])
            self.forwarded = per_core[0][1] | per_core[1][1]
        else:
            self.instrs, self.forwarded = fuse.optimize(trace.instrs, forward)
        self.written = {a.buffer.root().id for ins in self.instrs for a in ins.writes}
        self.onchip_bytes = self._allocate_onchip(trace)
        self.steps = []
        for ins in self.instrs:
            if ins.step is None:  # a dynamic loop's marker: loops.fold makes the loop
                self.steps.append(None)
                continue
            rd = [self._operand(a, ins.oob_skip) for a in ins.reads]
            wr = [self._operand(a, ins.oob_skip) for a in ins.writes]
            skipped = [r for r in rd if isinstance(r, IndirectOperand) and r.skip]
            if skipped:  # elements a skipped read did not reach keep the destination's value
                wr = [SkippedReads(w, skipped[0]) for w in wr]
            if getattr(ins, "forward", False):
                self.steps.append(fuse.bind_step(rd, wr, False))
                continue
            ops = getattr(ins, "operands", None)
            if ops is not None and ins.name in fuse.MATMULS:  # a merged matmul chain: (stationary, moving)
                rd = [self._keyed(op) for op in ops] + rd[2:]
            elif ops is not None:  # batched repeats: (reads, writes)
                rd, wr = ops
            self.steps.append(ins.step(rd, wr, ins.accumulate))
        self.inside = loops.fold(self.instrs, self.steps, self._operand)  # steps that run in a loop's body
        for b in self.buffers:  # the trace's per-element state (stamps, poison) served its checks
            b.stamps = b.poison = None

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
            key = (b.shape, b.dtype, b.core if self.cores_apart else 0)  # cores running at once share nothing
            pool = free.get(key)
            t = pool.pop() if pool else None
            if t is None:
                t = fill_sentinel(torch.empty(b.shape, dtype=b.dtype))
                total += t.numel() * t.element_size()
            self.base_env[b.id] = t
            ending.append((b.last_use, key, t))
        for b in trace.buffers:  # reshaped tiles: views of their parent's tensor
            if b.role == "alias":
                self.base_env[b.id] = self.base_env[b.parent.id].view(b.shape)
        return total

    def _operand(self, access, oob_skip=False) -> Operand:
        if access.indirect is not None:
            return IndirectOperand(access, self._operand(access.indirect.index), oob_skip)
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
                raise NKIError(
                    f"{b.describe()}: reshaping a {list(parent.shape)} tensor with strides "
                    f"{list(parent.stride())} needs a copy; pass a contiguous tensor"
                ) from e
        env.append({})  # env[-1]: this call's fp32 conversions of read-only HBM views (Operand.fp32)
        return env

    def run(self, env):
        with self.lock:
            if self.core_steps is None:
                self._run_steps(env, range(len(self.steps)))
            else:
                programs.run_two(self.kernel_name, env, self.core_steps, self._run_steps)

    def _run_steps(self, env, indices):
        i = indices.start
        try:
            for i in indices:
                if i not in self.inside:
                    self.steps[i](env)
        except loops.AtStep as e:
            ins = self.instrs[e.index]
            raise RuntimeError(f"NKI kernel '{self.kernel_name}': {ins.name} at {ins.line} failed: {e}") from e.cause
        except Exception as e:
            ins = self.instrs[i]
            raise RuntimeError(f"NKI kernel '{self.kernel_name}': {ins.name} at {ins.line} failed: {e}") from e


def _interleave(a: list, b: list) -> list:
    """a and b merged by their instructions' estimated start times, each kept in its own order."""
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        if a[i].est_start <= b[j].est_start:
            out.append(a[i])
            i += 1
        else:
            out.append(b[j])
            j += 1
    return out + a[i:] + b[j:]

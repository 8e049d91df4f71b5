"""Estimated Trainium time of PyTorch code run on neuron tensors, op by op:
NKI kernels by the NKI cost model (instruction level, torch_neuronx.nki.cost)
and every other op by the per-op roofline of torch_neuronx.trainium (the op
alone: operands streamed through HBM, FLOPs at the Tensor engine's peak,
elementwise work on its engine, plus one DMA in and out). c10d collectives
(torch.distributed on neuron tensors) are charged by the collective model of
torch_neuronx.estimation.collectives for their process group's size, as
"c10d::<op>" and engine "collective". Ops that only view memory cost nothing.
All of it reads the one table of Trainium numbers.

    with torch_neuronx.estimate("trn2") as est:   # = TrainiumEstimate
        model(x)
    print(est.total_us, est.by_op, est.by_engine)
    print(est.report())

NKI kernels are estimated for the target they are traced for (their
platform_target or NEURON_PLATFORM_TARGET_OVERRIDE, trn2 by default); if it
is not this estimate's target, leaving the block warns.

Runs the code for real (on the emulator) and records what ran; an op on
CPU tensors only is not counted. A custom op that runs NKI kernels counts
as those kernels; any other custom op (whose inner ops this mode does not
see) by the roofline of its operands.
"""

from __future__ import annotations

import warnings
from collections import defaultdict

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from .. import trainium
from ..nki.jit import run_observers as _kernel_run_observers
from . import ops as trace_estimate
from .collectives import C10D_KINDS, collective_s

# Transcendentals run on the Scalar engine's lookup tables; other elementwise
# work on the Vector engine.
_FREE_OPS = {
    "empty",
    "empty_strided",
    "empty_like",
    "detach",
    "lift_fresh",
    "_local_scalar_dense",
    "alias",
    "_unsafe_view",
    "_reshape_alias",
}  # metadata only (not flagged is_view)


def _group_size(args) -> int:
    """The size of the process group among a c10d op's arguments (a
    ScriptObject; ReduceOp objects are ScriptObjects too)."""
    import torch.distributed as dist

    for a in args:
        if isinstance(a, torch.ScriptObject):
            try:
                return dist.ProcessGroup.unbox(a).size()
            except (RuntimeError, TypeError):
                continue
    return dist.get_world_size()


def _larger_buffer_bytes(args) -> int:
    """nccl-tests' "size": the bytes of the largest tensor argument (a list
    of tensors counts as one buffer): all_gather's output, reduce_scatter's input."""
    return max((sum(t.numel() * t.element_size() for t in _tensors(a)) for a in args), default=0)


def _tensors(tree):
    return [t for t in tree_flatten(tree)[0] if isinstance(t, torch.Tensor)]


def _on_neuron(tensors) -> bool:
    return any(t.device.type == "neuron" for t in tensors)


def _flops(func, args, kwargs, out) -> float:
    from torch.utils import flop_counter

    formula = flop_counter.flop_registry.get(func._overloadpacket)
    if formula is not None:
        return float(formula(*args, **kwargs, out_val=out))
    if func._overloadpacket is torch.ops.aten._scaled_dot_product_flash_attention_for_cpu:
        q, k, v = args[:3]
        return float(flop_counter.sdpa_flop_count(q.shape, k.shape, v.shape))
    return 0.0


class TrainiumEstimate(TorchDispatchMode):
    """Records the estimated time of every op run on neuron tensors inside
    the `with` block. `by_op` maps "nki::<kernel>" and "aten::<op>" to
    [calls, microseconds] (and "c10d::<op>" for collectives); `by_engine`
    maps "tensor", "vector", "scalar", "gpsimd", "dma" and "collective" to
    the microseconds each is busy (an op outside NKI
    charges the resource that bounds it, and its fixed DMA cost to "dma";
    engines overlap inside NKI kernels, so the sum can exceed total_us)."""

    def __init__(self, target: str = "trn2"):
        super().__init__()
        if target not in trainium.CORES:
            raise ValueError(f"unknown Trainium target {target!r}; choose one of {sorted(trainium.CORES)}")
        self.core = trainium.CORES[target]
        self.by_op: dict[str, list] = defaultdict(lambda: [0, 0.0])
        self.by_engine: dict[str, float] = defaultdict(float)
        self._kernel_runs = 0
        self.kernel_targets: set = set()  # the targets NKI kernels were traced for

    # -- totals
    @property
    def total_us(self) -> float:
        return sum(us for _, us in self.by_op.values())

    @property
    def kernels_us(self) -> float:
        return sum(us for name, (_, us) in self.by_op.items() if name.startswith("nki::"))

    def report(self, n: int = 10) -> str:
        """The estimate for a person: total, NKI share, busy time per engine, top ops."""
        lines = [
            f"Estimated {self.core.name} time on one {self.core.generation} core: {self.total_us:.1f} us "
            f"({self.kernels_us:.1f} us in NKI kernels, {sum(c for c, _ in self.by_op.values())} ops)",
            "busy per engine: "
            + ", ".join(f"{e} {us:.1f} us" for e, us in sorted(self.by_engine.items(), key=lambda kv: -kv[1])),
            f"{'op':<48} {'calls':>6} {'us':>10}",
        ]
        lines += [f"{op:<48} {calls:>6} {us:>10.1f}" for op, calls, us in self.top(n)]
        return "\n".join(lines)

    def top(self, n: int = 8) -> list[tuple[str, int, float]]:
        """The n ops with the most estimated time: (name, calls, us)."""
        rows = sorted(self.by_op.items(), key=lambda kv: -kv[1][1])[:n]
        return [(name, calls, us) for name, (calls, us) in rows]

    # -- recording
    def __enter__(self):
        _kernel_run_observers.append(self._kernel_ran)
        return super().__enter__()

    def __exit__(self, *exc):
        _kernel_run_observers.remove(self._kernel_ran)
        others = self.kernel_targets - {self.core.name}
        if others:
            warnings.warn(
                f"NKI kernels were estimated for {sorted(others)} (their platform_target or "
                f"NEURON_PLATFORM_TARGET_OVERRIDE), the other ops for {self.core.name}; set "
                f"NEURON_PLATFORM_TARGET_OVERRIDE={self.core.name} to estimate both for one target",
                stacklevel=2,
            )
        return super().__exit__(*exc)

    def _kernel_ran(self, name, estimate):
        row = self.by_op[f"nki::{name}"]
        row[0] += 1
        row[1] += estimate.total_us
        self._kernel_runs += 1
        self.kernel_targets.add(estimate.target)
        for engine, us in estimate.engine_us.items():
            self.by_engine[engine] += us

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        runs = self._kernel_runs
        out = func(*args, **kwargs)
        if self._kernel_runs > runs:
            return out  # a custom op that ran NKI kernels: they reported themselves
        inputs, outputs = _tensors((args, kwargs)), _tensors(out)
        if not _on_neuron(inputs + outputs) or func.is_view or func._overloadpacket.__name__ in _FREE_OPS:
            return out
        name = func._overloadpacket.__name__
        if func.namespace == "c10d" and name in C10D_KINDS:
            self._record_collective(name, args)
        else:
            self._record(func, args, kwargs, out, inputs, outputs)
        return out

    def _record_collective(self, name, args):
        us = collective_s(self.core, C10D_KINDS[name], _larger_buffer_bytes(args), _group_size(args)) * 1e6
        self.by_engine["collective"] += us
        row = self.by_op[f"c10d::{name}"]
        row[0] += 1
        row[1] += us

    def _record(self, func, args, kwargs, out, inputs, outputs):
        name = func._overloadpacket.__name__
        nbytes = sum(t.numel() * t.element_size() for t in inputs + outputs if t.device.type == "neuron")
        flops = _flops(func, args, kwargs, out)
        elements = max((t.numel() for t in inputs + outputs), default=0)  # a reduction reads more than it writes
        fp32 = any(t.dtype == torch.float32 for t in inputs) and flops > 0
        bound, bound_s = trace_estimate.op_bound(
            self.core, name, flops=flops, nbytes=nbytes, elements=elements, fp32=fp32
        )
        fixed = 2 * self.core.dma_fixed_latency_s
        self.by_engine[bound] += bound_s * 1e6
        self.by_engine["dma"] += fixed * 1e6
        row = self.by_op[f"{func.namespace}::{name}"]
        row[0] += 1
        row[1] += (bound_s + fixed) * 1e6

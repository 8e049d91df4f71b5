"""Compiled graphs in neuron traces: while a profiler records device activity
(torch_neuronx._C._trace_active()), each call of a graph compiled by the
`neuron` backend is one "compiled graph" slice on the device track, its
inner ops nested below it, and one slice on the estimated-Trainium2 track.

The estimate treats the graph as the fused kernels Inductor made of it: its
FLOPs (torch.utils.flop_counter over the FX graph on fake tensors) at the
Tensor engine's rate, its inputs and outputs streamed once through HBM,
its output elements on the Vector engine; the slowest bounds it. Worked
out on the first traced call, per input shapes; nothing is paid while no
profiler records."""

from __future__ import annotations

import functools
import itertools

import torch

from .. import _C

_graph_ids = itertools.count()


def _nbytes(tensors) -> int:
    return sum(t.numel() * t.element_size() for t in tensors if isinstance(t, torch.Tensor))


def _estimate(gm, args) -> tuple[float, str]:
    """(microseconds, bounding engine) of one call of `gm` on `args`."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.utils.flop_counter import FlopCounterMode

    from .. import trainium
    from ..estimation import ops as trace_estimate

    core = trainium.CORES[trace_estimate.TARGET]
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    flops, out_bytes, out_elements = 0.0, 0, 0
    try:
        with FakeTensorMode(allow_non_fake_inputs=True) as mode:
            fakes = [mode.from_tensor(a) if isinstance(a, torch.Tensor) else a for a in args]
            with FlopCounterMode(display=False) as counter:
                out = gm(*fakes)
        outs = [o for o in torch.utils._pytree.tree_leaves(out) if isinstance(o, torch.Tensor)]
        flops, out_bytes, out_elements = float(counter.get_total_flops()), _nbytes(outs), sum(o.numel() for o in outs)
    except Exception:  # a graph fake tensors cannot run: only its inputs are counted (docs/estimates.md)
        pass
    fp32 = any(t.dtype == torch.float32 for t in tensors)
    s, engine = trace_estimate.op_cost(
        core, "graph", flops=flops, nbytes=_nbytes(tensors) + out_bytes, elements=out_elements, fp32=fp32
    )
    return s * 1e6, engine


def traced(compiled, gm):
    """`compiled` (the backend's callable for `gm`), recorded in traces."""
    name = f"compiled graph {next(_graph_ids)}"
    estimates: dict = {}

    @functools.wraps(compiled)
    def run(*args):
        if not _C._trace_active():
            return compiled(*args)
        flat = args[0] if len(args) == 1 and isinstance(args[0], list) else args  # boxed calls pass one list
        key = tuple(tuple(a.shape) if isinstance(a, torch.Tensor) else a for a in flat if not callable(a))
        if key not in estimates:  # the first traced call with these shapes
            estimates[key] = _estimate(gm, flat)
        us, engine = estimates[key]
        with _C._TraceScope("graph", name, "Inductor", _nbytes(flat), us, engine):
            return compiled(*args)

    if hasattr(compiled, "_boxed_call"):
        run._boxed_call = compiled._boxed_call
    return run

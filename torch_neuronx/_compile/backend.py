"""The named compile backend `neuron` (`torch.compile(model, backend="neuron")`,
found by dynamo through the `torch_dynamo_backends` entry point): Inductor set
up for NeuronCores.

- Static shapes by default: a new input shape is a new graph (reported by
  `get_dynamo_metrics()` with its recompile reason), never an automatically
  dynamic one. `dynamic=False` and `dynamic=True` are honoured as given.
- `mode=` and `options=` are Inductor's; "reduce-overhead" asks for CUDA
  graphs, which NeuronCores do not have here, so it compiles like the default
  mode. `options={"eager_fallback": True}` (or TORCH_NEURONX_COMPILE_FALLBACK=1)
  runs a graph Inductor cannot compile eagerly instead of raising.
- A failure names the op and the reason (`NeuronCompileError`).
- On a device whose memory the host cannot address, Inductor's host kernels
  cannot run: the graph runs op by op, staged through host copies
  (`host_access.py`), and is counted as a host-staged graph.
- Under strict mode, each graph is checked for the graph break that ended it,
  a recompilation and symbolic shapes (`torch_neuronx.strict`); in error mode
  a graph with a finding raises StrictModeError when it first runs."""

import torch

from . import graph_trace, host_access
from .failure import FALLBACK_OPTION, NeuronCompileError, describe, eager_fallback, fallback_enabled
from .metrics import count_staged_graph


def _static_shapes_by_default() -> None:
    """Turns off dynamo's automatic dynamic shapes, which would make the second
    shape seen by a frame symbolic. A frame's first compile is always static,
    so switching it off when the backend first compiles covers every later
    recompile. Dynamo has no per-backend form of this setting (torch.compile
    wraps a named backend without its `backend_ctx_ctor`), so it applies to the
    process; `dynamic=True` still asks for dynamic graphs explicitly."""
    torch._dynamo.config.automatic_dynamic_shapes = False


def _strict_check(gm, example_inputs):
    """Strict mode's findings for this graph; the error to raise in error mode."""
    import sys

    strict = sys.modules.get("torch_neuronx.observability.strict_events")  # never loaded: strict mode was never on
    return None if strict is None else strict.check_compiled_graph(gm, example_inputs)


def neuron(gm, example_inputs, mode=None, options=None):
    from torch._inductor import list_mode_options
    from torch._inductor.compile_fx import compile_fx

    from . import register

    register()
    _static_shapes_by_default()
    refusal = _strict_check(gm, example_inputs)
    if refusal is not None:

        def refuse(*args):
            raise refusal

        return refuse
    devices = host_access.graph_devices(example_inputs)
    if not all(host_access.addressable(d) for d in devices or {None}):
        count_staged_graph()
        return gm.forward
    patches = dict(list_mode_options(mode)) if mode else {}
    patches.pop("triton.cudagraphs", None)  # no CUDA graphs on neuron
    patches.update(options or {})
    fallback = fallback_enabled(patches.pop(FALLBACK_OPTION, None))
    try:
        return graph_trace.traced(compile_fx(gm, example_inputs, config_patches=patches), gm)
    except Exception as exc:  # Inductor's failures have no common base class
        if fallback:
            return eager_fallback(gm, exc)
        raise NeuronCompileError(*describe(exc)) from exc

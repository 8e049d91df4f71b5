"""Where strict mode looks: the C++ core's events (CPU fallbacks, host
synchronisations, float64 compute), device-to-CPU copies between optimizer
steps, each compiled graph (the compile backend asks) and each neuron process
group (the process group asks). Hooks are installed only while a mode is on."""

from __future__ import annotations

import os

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook

from .. import _C, trainium
from .strict_findings import (
    REMEDIES,
    StrictModeError,
    _live_frames,
    _local,
    _lock,
    _pending,
    _state,
    current_mode,
    locate,
    record,
)
from .strict_memory import check_memory


def _apply() -> None:
    """The C++ hook and the optimizer step hook are installed only while a mode is on."""
    on = current_mode() != "off"
    _C._set_strict_hook(_on_event if on else None)
    if on and _state["step_hook"] is None:
        _state["step_hook"] = register_optimizer_step_post_hook(_after_step)
    elif not on and _state["step_hook"] is not None:
        _state["step_hook"].remove()
        _state["step_hook"] = None
    _state["ever"] |= on


def _on_event(kind: str, op: str, detail: str) -> None:
    """`_C._set_strict_hook`'s callback: kind "fallback", "host_sync" or "float64"."""
    if getattr(_local, "busy", False):
        return
    _local.busy = True
    try:
        frames = _live_frames()
        if _compiling(frames):
            return  # the compiler's own work (Inductor folding constants), once per compile, not in a step
        if kind == "host_sync" and op == "aten::_copy_from":
            _on_copy(op, detail, frames)
        elif kind == "host_sync" and "data-dependent" in detail:
            record(kind, op, detail, where=locate(frames=frames), remedy=REMEDIES["data_dependent"])
        else:
            record(kind, op, detail, where=locate(frames=frames))
    finally:
        _local.busy = False


_COMPILER_FRAMES = (os.path.join("_dynamo", "convert_frame.py"), os.path.join("_inductor", "compile_fx.py"))


def _compiling(frames) -> bool:
    """Whether dynamo or Inductor is compiling on this stack (not running compiled code)."""
    return any(f.endswith(_COMPILER_FRAMES) for f, _ in frames)


def _on_copy(op: str, detail: str, frames) -> None:
    where = locate(frames=frames)
    if any(f.endswith(os.path.join("_dynamo", "eval_frame.py")) for f, _ in frames):
        record("host_sync", op, f"{detail}, inside a compiled region", where=where)
        return
    with _lock:  # known to be inside a step only when the next optimizer step comes
        entry = _pending.setdefault(where, [detail, 0])
        entry[1] += 1


def _after_step(optimizer, args, kwargs) -> None:
    """Optimizer step post hook: confirms the copies since the previous step and checks memory."""
    with _lock:
        pending = list(_pending.items())
        _pending.clear()
        _state["steps"] += 1
        earlier_step = _state["steps"] > 1
    where = locate()
    try:
        if earlier_step:
            for copy_where, (detail, count) in pending:
                record(
                    "host_sync",
                    "aten::_copy_from",
                    f"{detail}, between two optimizer steps",
                    where=copy_where,
                    count=count,
                )
    finally:
        check_memory(where)


def check_compiled_graph(gm, example_inputs) -> StrictModeError | None:
    """The neuron backend's check of one dynamo graph: a graph break ending
    it, a recompilation of its frame, symbolic shapes. Returns, in error mode,
    the error the backend raises when the graph first runs (an error raised
    while compiling would reach the user wrapped in BackendCompilerFailed)."""
    if current_mode() == "off":
        return None
    from .._compile.metrics import current_recompilation  # loaded with the compile backend that calls this

    reason = getattr(gm, "compile_subgraph_reason", None)
    stack = list(reversed(reason.user_stack)) if reason is not None and reason.user_stack else []
    inner = [(f.filename, f.lineno) for f in stack]
    name = stack[-1].name if stack else "<graph>"
    call_site = locate()
    found = []
    if reason is not None and reason.graph_break:
        found.append(
            (
                "graph_break",
                f"graph break in {stack[0].name if stack else name}",
                reason.reason.strip().splitlines()[0],
                locate(inner),
            )
        )
    why = current_recompilation()
    if why:
        found.append(("recompile", f"recompilation of {name}", why, call_site))
    symbols = sorted({str(s) for s in _symbolic_sizes(gm, example_inputs)})
    if symbols:
        found.append(("dynamic_shape", f"graph of {name}", f"symbolic sizes {', '.join(symbols[:8])}", call_site))
    first = None
    for kind, op, detail, where in found:
        finding = record(kind, op, detail, where=where, may_raise=False)
        if current_mode() == "error" and first is None:
            first = StrictModeError(finding)
    return first


def _symbolic_sizes(gm, example_inputs):
    values = list(example_inputs) + [n.meta.get("example_value") for n in gm.graph.nodes if n.op == "placeholder"]
    for v in values:
        if isinstance(v, torch.SymInt) and not isinstance(v.node.maybe_as_int(), int):
            yield v
        elif isinstance(v, torch.Tensor):
            yield from (s for s in v.shape if isinstance(s, torch.SymInt))


def instance_cores() -> tuple[int, str]:
    """Logical NeuronCores of the emulated instance (chips x cores per chip at
    the LNC in force; every process sees every core), and how that was found."""
    name, _, config = _C._driver_info()
    settings = dict(line.split("=", 1) for line in config.splitlines() if "=" in line)
    if "TORCH_NEURONX_EMU_CHIPS" in settings and "NEURON_LOGICAL_NC_CONFIG" in settings:
        chips, lnc = int(settings["TORCH_NEURONX_EMU_CHIPS"]), int(settings["NEURON_LOGICAL_NC_CONFIG"])
        return chips * (trainium.TRN2.cores_per_chip // lnc), f"{chips} Trainium2 chip(s) at LNC={lnc}"
    return torch.neuron.device_count(), f"the {name} driver's visible cores"


def check_process_group(size: int) -> None:
    """At the creation of a neuron process group of `size` ranks: the ranks on
    this host (torchrun's LOCAL_WORLD_SIZE, else all of them) need a core each."""
    if current_mode() == "off":
        return
    here = int(os.environ.get("LOCAL_WORLD_SIZE", size))
    cores, what = instance_cores()
    if here > cores:
        record(
            "process_group",
            "ProcessGroupNeuron",
            f"{here} ranks on this host need {here} NeuronCores; the emulated instance has {cores} ({what})",
        )

"""Strict mode (issue 22): report (`warn`) or refuse (`error`) what would fail
or be slow on Trainium although it runs on the emulator.

    TORCH_NEURONX_STRICT=warn python train.py     # whole process, report at exit
    with torch_neuronx.strict("error"): ...       # a block (also a decorator)

Kinds of finding and where they are seen:
- fallback, host_sync, float64: the C++ core calls `_on_event` through
  `_C._set_strict_hook` on the thread running the op. A device->CPU copy
  (`aten::_copy_from`) counts only inside a step: between two optimizer steps
  (confirmed at the second one) or inside a compiled region.
- recompile, graph_break, dynamic_shape: the `neuron` compile backend calls
  `check_compiled_graph`; in error mode the graph is refused when it first runs.
- memory: a device's peak allocation against one logical core's HBM on
  Trainium at the LNC in force, at each optimizer step, at the end of a
  strict block and at exit.
- process_group: `_distributed` calls `check_process_group` when a neuron
  group is created.

A finding names the op, the innermost Python line outside torch and
torch_neuronx (`line`) and, when different, the innermost line outside
installed packages and the standard library (`user_line`: the user's own line
when the op is inside e.g. transformers). Findings are deduplicated by (kind,
op, line) with counts; a new one warns once (StrictModeWarning). The mode is
process-wide (ops of backward run on the device's autograd thread).
"""

from __future__ import annotations

import contextlib
import os
import sys
import sysconfig
import threading
import warnings
from dataclasses import asdict, dataclass

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook

from . import _C

ENV, REPORT_ENV = "TORCH_NEURONX_STRICT", "TORCH_NEURONX_REPORT"
MODES = ("off", "warn", "error")

REMEDIES = {
    "fallback": "it has no NeuronCore kernel and ran on the host CPU with copies both ways: on Trainium it "
                "would leave the device or fail to compile; use supported ops, move it out of the step, or "
                "write an NKI kernel (torch_neuronx.nki_op)",
    "host_sync": "the host waits for the device, which stalls the step and splits its graph on Trainium: keep "
                 "the value on the device (accumulate it, read it every N steps, log outside the step)",
    "data_dependent": "the output's shape depends on the data, which the Neuron compiler cannot size: use a "
                      "fixed-shape form (masks, torch.where, nonzero_static / size=...)",
    "float64": "Trainium's engines have no float64 or complex arithmetic: compute in float32 or bfloat16 (watch "
               "torch.from_numpy, which gives float64, and torch.set_default_dtype)",
    "recompile": "each new input shape compiles a new graph (minutes on Trainium): pad inputs to a few fixed "
                 "shapes (buckets), or keep shapes and Python values passed to the model constant",
    "graph_break": "the compiled region is split here and the device waits for the host between the parts: "
                   "remove the Python-side operation from the compiled code or move it out of the step",
    "dynamic_shape": "the Neuron compiler needs static shapes: compile with dynamic=False (the neuron "
                     "backend's default) and pad inputs to fixed shapes instead of mark_dynamic/dynamic=True",
    "memory": "the step needs more memory than one NeuronCore's HBM: shard the model (FSDP2, tensor "
              "parallel), checkpoint activations, use a smaller batch or bfloat16",
    "process_group": "a rank needs a NeuronCore of its own: use fewer ranks per host, more hosts, or an "
                     "instance with more cores (emulator: TORCH_NEURONX_EMU_CHIPS, NEURON_LOGICAL_NC_CONFIG=1)",
}


class StrictModeError(RuntimeError):
    """Raised in error mode at the first finding; `.finding` holds it."""

    def __init__(self, finding: Finding):
        self.finding = finding
        super().__init__(finding.message())


class StrictModeWarning(UserWarning):
    """Issued once per distinct finding in warn mode."""


@dataclass
class Finding:
    kind: str
    op: str
    detail: str
    line: str  # "file:lineno" of the innermost frame outside torch and torch_neuronx
    user_line: str | None  # the innermost frame outside installed packages, when different
    remedy: str
    count: int = 1

    def message(self) -> str:
        where = self.line + (f" (from {self.user_line})" if self.user_line else "")
        return f"strict mode: {self.kind}: {self.op} at {where}: {self.detail}. What to do: {self.remedy}."

    def as_dict(self) -> dict:
        return asdict(self)


# -- source lines --------------------------------------------------------------
_OWN = tuple(os.path.dirname(m.__file__) + os.sep for m in (torch, sys.modules[__package__]))
_LIBS = tuple(sorted({os.path.join(sysconfig.get_paths()[k], "") for k in ("stdlib", "platstdlib", "purelib",
                                                                              "platlib")}))


def _internal(filename: str) -> bool:
    return (filename.startswith(_OWN) or filename.startswith(("<frozen", "<eval_with_key"))
            or "/torchinductor_" in filename)


def _live_frames() -> list[tuple[str, int]]:
    frames, f = [], sys._getframe(1)
    while f is not None:
        frames.append((f.f_code.co_filename, f.f_lineno))
        f = f.f_back
    return frames


def locate(inner=(), frames=None) -> tuple[str, str | None]:
    """(line, user_line) of the innermost frames of `inner` (innermost first,
    e.g. dynamo's user stack of a traced frame) and then the live stack."""
    frames = list(inner) + (_live_frames() if frames is None else frames)
    outside = [(f, n) for f, n in frames if not _internal(f)]
    if not outside:
        return "<no Python frame (backward or a C++ thread)>", None
    line = f"{outside[0][0]}:{outside[0][1]}"
    user = next((f"{f}:{n}" for f, n in outside if not f.startswith(_LIBS)), None)
    return line, (user if user != line else None)


# -- state -----------------------------------------------------------------------
_lock = threading.RLock()
_local = threading.local()
_stack: list[str] = []  # modes of the strict() blocks in force, innermost last
_findings: dict[tuple[str, str, str], Finding] = {}
_pending: dict[tuple[str, str | None], list] = {}  # device->CPU copies since the last optimizer step
_state = {"env": "off", "steps": 0, "ever": False, "step_hook": None}


def _parse(mode) -> str:
    text = str(mode).strip().lower()
    text = {"": "off", "0": "off", "false": "off", "1": "warn", "true": "warn"}.get(text, text)
    if text not in MODES:
        raise ValueError(f"strict mode {mode!r} is not one of {', '.join(MODES)} ({ENV})")
    return text


def current_mode() -> str:
    return _stack[-1] if _stack else _state["env"]


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


def record(kind: str, op: str, detail: str, *, where=None, remedy: str | None = None, count: int = 1,
           may_raise: bool = True) -> Finding | None:
    """Counts one finding (located on the live stack unless `where` is given);
    warns when it is new (warn mode), raises StrictModeError (error mode)."""
    mode = current_mode()
    if mode == "off":
        return None
    line, user_line = where or locate()
    key = (kind, op, line)
    with _lock:
        finding = _findings.get(key)
        new = finding is None
        if new:
            finding = _findings[key] = Finding(kind, op, detail, line, user_line, remedy or REMEDIES[kind], count)
        else:
            finding.count += count
    if mode == "error" and may_raise:
        raise StrictModeError(finding)
    if new and mode == "warn":
        filename, _, lineno = line.rpartition(":")
        warnings.warn_explicit(finding.message(), StrictModeWarning, filename or line,
                               int(lineno) if lineno.isdigit() else 0)
    return finding


# -- the C++ core's events -------------------------------------------------------
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
                record("host_sync", "aten::_copy_from", f"{detail}, between two optimizer steps",
                       where=copy_where, count=count)
    finally:
        check_memory(where)


def check_memory(where=None, may_raise: bool = True) -> None:
    from ._strict_report import check_memory

    check_memory(where, may_raise)


# -- compile and distributed checks (called by _compile/backend.py, _distributed.py)
def check_compiled_graph(gm, example_inputs) -> StrictModeError | None:
    """The neuron backend's check of one dynamo graph: a graph break ending
    it, a recompilation of its frame, symbolic shapes. Returns, in error mode,
    the error the backend raises when the graph first runs (an error raised
    while compiling would reach the user wrapped in BackendCompilerFailed)."""
    if current_mode() == "off":
        return None
    from ._compile.metrics import current_recompilation

    reason = getattr(gm, "compile_subgraph_reason", None)
    stack = list(reversed(reason.user_stack)) if reason is not None and reason.user_stack else []
    inner = [(f.filename, f.lineno) for f in stack]
    name = stack[-1].name if stack else "<graph>"
    call_site = locate()
    found = []
    if reason is not None and reason.graph_break:
        found.append(("graph_break", f"graph break in {stack[0].name if stack else name}",
                      reason.reason.strip().splitlines()[0], locate(inner)))
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
        from . import trainium

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
        record("process_group", "ProcessGroupNeuron", f"{here} ranks on this host need {here} NeuronCores; the "
               f"emulated instance has {cores} ({what})")


# -- the public object -------------------------------------------------------------
def findings() -> list[Finding]:
    with _lock:
        return sorted(_findings.values(), key=lambda f: -f.count)


def reset() -> None:
    """Forgets the findings, pending copies, steps and peaks (not the mode)."""
    with _lock:
        _findings.clear()
        _pending.clear()
        _state["steps"] = 0
    if "torch_neuronx._strict_report" in sys.modules:
        sys.modules["torch_neuronx._strict_report"].reset_memory()


class strict(contextlib.ContextDecorator):
    """`with torch_neuronx.strict("error"):` (or "warn", or "off" to pause an
    outer mode) for a block; the environment's TORCH_NEURONX_STRICT covers the
    process. Also `strict.findings()`, `strict.report()`, `strict.reset()`,
    `strict.active_mode()`, `strict.save(path)`."""

    def __init__(self, mode: str = "error"):
        self._mode = _parse(mode)

    def __enter__(self):
        with _lock:
            _stack.append(self._mode)
            _apply()
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None:
                check_memory(locate())
        finally:
            with _lock:
                _stack.pop()
                _apply()
        return False

    findings = staticmethod(findings)
    reset = staticmethod(reset)
    active_mode = staticmethod(current_mode)

    @staticmethod
    def report() -> str:
        from ._strict_report import format_report, run_record

        return format_report(run_record())

    @staticmethod
    def save(path: str) -> None:
        from ._strict_report import save

        save(path)


def at_exit() -> None:
    """At exit (from _exit.py): the last memory check; in warn mode from the
    environment the report on stderr; the run record to TORCH_NEURONX_REPORT."""
    if not _state["ever"] or not torch.neuron.is_initialized():
        return  # nothing ran on a NeuronCore here (torchrun's launcher, say): no report
    from ._strict_report import format_report, run_record, save

    if current_mode() != "off":
        check_memory(("<exit>", None), may_raise=False)
    if _state["env"] == "warn":
        print(format_report(run_record()), file=sys.stderr, end="")
    path = os.environ.get(REPORT_ENV)
    if path:  # "{rank}" in it: one record per process of a torchrun job
        save(path.replace("{rank}", os.environ.get("RANK", "0")))
    with _lock:  # what runs after this (the exit's own device work) is not the user's
        _stack.clear()
        _state["env"] = "off"
        _apply()


_state["env"] = _parse(os.environ.get(ENV, "off"))
if _state["env"] != "off":
    _apply()

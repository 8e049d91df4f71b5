"""Strict mode's findings: what would fail or be slow on Trainium although it
runs on the emulator, each located on the user's line, counted and, by the
mode in force, warned about or raised.

The kinds (the remedies below): fallback, host_sync, data_dependent, float64
(seen by the C++ core, strict_events.py), recompile, graph_break,
dynamic_shape (the compile backend), memory (strict_memory.py),
process_group (the process group's creation). A finding names the op, the
innermost Python line outside torch and torch_neuronx (`line`) and, when
different, the innermost line outside installed packages and the standard
library (`user_line`: the user's own line when the op is inside e.g.
transformers). Findings are deduplicated by (kind, op, line) with counts; a
new one warns once (StrictModeWarning). The mode is process-wide: the
innermost `strict(...)` block's, else the environment's (TORCH_NEURONX_STRICT).
"""

from __future__ import annotations

import os
import sys
import sysconfig
import threading
import warnings
from dataclasses import asdict, dataclass

import torch

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
_OWN = tuple(os.path.dirname(m.__file__) + os.sep for m in (torch, sys.modules["torch_neuronx"]))
_LIBS = tuple(
    sorted({os.path.join(sysconfig.get_paths()[k], "") for k in ("stdlib", "platstdlib", "purelib", "platlib")})
)


def _internal(filename: str) -> bool:
    return (
        filename.startswith(_OWN) or filename.startswith(("<frozen", "<eval_with_key")) or "/torchinductor_" in filename
    )


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


def record(
    kind: str, op: str, detail: str, *, where=None, remedy: str | None = None, count: int = 1, may_raise: bool = True
) -> Finding | None:
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
        warnings.warn_explicit(
            finding.message(), StrictModeWarning, filename or line, int(lineno) if lineno.isdigit() else 0
        )
    return finding


def findings() -> list[Finding]:
    with _lock:
        return sorted(_findings.values(), key=lambda f: -f.count)

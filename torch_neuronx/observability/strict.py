"""Strict mode: report (`warn`) or refuse (`error`) what would fail
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
process-wide (a backward may run on a thread of its own: TORCH_NEURONX_AUTOGRAD_THREAD).
"""

from __future__ import annotations

import contextlib
import os
import sys

import torch

from .. import settings
from . import strict_memory
from .strict_events import _apply
from .strict_findings import (
    ENV,
    REPORT_ENV,
    _findings,
    _lock,
    _parse,
    _pending,
    _stack,
    _state,
    current_mode,
    findings,
    locate,
)
from .strict_findings import (
    StrictModeError as StrictModeError,  # torch_neuronx.StrictModeError
)
from .strict_findings import (
    StrictModeWarning as StrictModeWarning,
)
from .strict_memory import check_memory
from .strict_report import format_report, run_record, save


def reset() -> None:
    """Forgets the findings, pending copies, steps and peaks (not the mode)."""
    with _lock:
        _findings.clear()
        _pending.clear()
        _state["steps"] = 0
    strict_memory.reset_memory()


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
        return format_report(run_record())

    @staticmethod
    def save(path: str) -> None:
        save(path)


def at_exit() -> None:
    """At exit (from _exit.py): the last memory check; in warn mode from the
    environment the report on stderr; the run record to TORCH_NEURONX_REPORT."""
    if not _state["ever"] or not torch.neuron.is_initialized():
        return  # nothing ran on a NeuronCore here (torchrun's launcher, say): no report
    if current_mode() != "off":
        check_memory(("<exit>", None), may_raise=False)
    if _state["env"] == "warn":
        print(format_report(run_record()), file=sys.stderr, end="")
    path = settings.value(REPORT_ENV)
    if path:  # "{rank}" in it: one record per process of a torchrun job
        save(path.replace("{rank}", os.environ.get("RANK", "0")))
    with _lock:  # what runs after this (the exit's own device work) is not the user's
        _stack.clear()
        _state["env"] = "off"
        _apply()


_state["env"] = settings.value(ENV) or "off"  # a bad value: off (import warned; the device raises)
if _state["env"] != "off":
    _apply()

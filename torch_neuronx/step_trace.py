"""Traces a few optimizer steps of an unchanged script: with
TORCH_NEURONX_TRACE=trace.json (the text "{rank}" is replaced by the
process's RANK), torch.profiler records CPU and neuron activity from the end
of optimizer step `skip` to the end of step `skip + count`
(TORCH_NEURONX_TRACE_STEPS=skip:count, default 2:3: past the first
compilations), writes the Chrome/Perfetto trace there and a summary beside
it (<trace>.summary.json): per step, the measured wall time and the
estimated Trainium2 device time (the estimated track's slices, the host
assumed never to hold the device up). Strict mode's run record and
`python -m torch_neuronx report` show the summary."""

from __future__ import annotations

import json
import os
import sys
import time

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook

ENV, STEPS_ENV = "TORCH_NEURONX_TRACE", "TORCH_NEURONX_TRACE_STEPS"

_state: dict = {"steps": 0, "prof": None, "started": None, "summary": None, "hook": None}


def _parse_steps(text: str) -> tuple[int, int]:
    try:
        skip, count = (int(v) for v in text.split(":"))
        if skip < 0 or count < 1:
            raise ValueError
        return skip, count
    except ValueError:
        raise ValueError(f"{STEPS_ENV}={text!r}: expected skip:count with skip >= 0 and count >= 1, e.g. 2:3") from None


def trace_path() -> str | None:
    path = os.environ.get(ENV)
    return path.replace("{rank}", os.environ.get("RANK", "0")) if path else None


def summarize(trace_file: str, steps: int, wall_s: float) -> dict:
    """Per-step figures of a trace written by this module (or any neuron trace of `steps` steps)."""
    from .trace_report import load, per_family

    events = load(trace_file)
    measured, estimated = per_family(events)
    est_us = sum(sum(v.values()) for v in estimated.values())
    return {"trace": os.path.abspath(trace_file), "steps": steps, "wall_ms_per_step": 1e3 * wall_s / steps,
            "device_ms_per_step": sum(measured.values()) / 1e3 / steps,
            "estimated_trn2_ms_per_step": est_us / 1e3 / steps}


def _on_step(optimizer, args, kwargs) -> None:
    _state["steps"] += 1
    skip, count = _parse_steps(os.environ.get(STEPS_ENV, "2:3"))
    prof = _state["prof"]
    if prof is None and _state["summary"] is None and _state["steps"] == skip:
        from torch.profiler import ProfilerAction, ProfilerActivity, profile

        # a schedule that always records: the trace marks each step (ProfilerStep#N)
        _state["prof"] = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1],
                                 schedule=lambda step: ProfilerAction.RECORD)
        _state["prof"].start()
        _state["started"] = time.perf_counter()
    elif prof is not None and _state["steps"] < skip + count:
        prof.step()
    elif prof is not None:
        stop()


def stop() -> dict | None:
    """Ends a trace in progress (at its last step, or at exit), writes it and its summary."""
    prof = _state["prof"]
    if prof is None:
        return _state["summary"]
    _state["prof"] = None
    wall = time.perf_counter() - _state["started"]
    prof.stop()
    skip, _ = _parse_steps(os.environ.get(STEPS_ENV, "2:3"))
    steps = max(_state["steps"] - skip, 1)
    path = trace_path()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    prof.export_chrome_trace(path)
    summary = summarize(path, steps, wall)
    with open(path + ".summary.json", "w") as f:
        json.dump(summary, f, indent=1)
    _state["summary"] = summary
    print(f"torch_neuronx: traced {steps} optimizer steps to {path} (open in https://ui.perfetto.dev); "
          f"estimated Trainium2 device time {summary['estimated_trn2_ms_per_step']:.2f} ms per step, measured "
          f"here {summary['wall_ms_per_step']:.0f} ms", file=sys.stderr, flush=True)
    return summary


def summary() -> dict | None:
    return _state["summary"]


def install() -> None:
    """Called at import when TORCH_NEURONX_TRACE is set."""
    if _state["hook"] is None:
        _parse_steps(os.environ.get(STEPS_ENV, "2:3"))  # a bad value fails at import, not at step 2
        _state["hook"] = register_optimizer_step_post_hook(_on_step)

"""A window of optimizer steps of an unchanged script, seen as Trainium2
would run it. The window runs from the end of optimizer step `skip` to the
end of step `skip + count` (TORCH_NEURONX_TRACE_STEPS=skip:count, default
2:3: past the first compilations). Two ways:

- TORCH_NEURONX_TRACE=trace.json ("{rank}" becomes the process's RANK):
  torch.profiler records CPU and neuron activity over the window and writes
  the Chrome/Perfetto trace there, with a summary beside it
  (<trace>.summary.json);
- strict mode from the environment (TORCH_NEURONX_STRICT) without a trace:
  the device's activity buffer (csrc/profiler/NeuronTrace.h) alone, no
  profiler, estimated when the window ends.

The summary, per step: the wall time here and the estimated Trainium2 device
time (the sum of the depth-0 activities' estimates: the host assumed never to
hold the device up). Strict mode's run record and `python -m torch_neuronx
report` show it."""

from __future__ import annotations

import json
import os
import sys
import time

from torch.optim.optimizer import register_optimizer_step_post_hook

from .. import _C, settings

ENV, STEPS_ENV = "TORCH_NEURONX_TRACE", "TORCH_NEURONX_TRACE_STEPS"

# recorder: the running torch.profiler (trace) or activity buffer (estimate only)
_state: dict = {"steps": 0, "recorder": None, "started": None, "summary": None, "hook": None}


def _window() -> tuple[int, int]:
    return settings.value(STEPS_ENV) or (2, 3)


def trace_path() -> str | None:
    path = settings.value(ENV)
    return path.replace("{rank}", os.environ.get("RANK", "0")) if path else None


def summarize(trace_file: str, steps: int, wall_s: float) -> dict:
    """Per-step figures of a neuron trace of `steps` steps."""
    from .trace_report import load, per_family

    measured, estimated = per_family(load(trace_file))
    est_us = sum(sum(v.values()) for v in estimated.values())
    return {
        "trace": os.path.abspath(trace_file),
        "steps": steps,
        "wall_ms_per_step": 1e3 * wall_s / steps,
        "device_ms_per_step": sum(measured.values()) / 1e3 / steps,
        "estimated_trn2_ms_per_step": est_us / 1e3 / steps,
    }


def _start() -> None:
    if trace_path():
        from torch.profiler import ProfilerAction, ProfilerActivity, profile

        # a schedule that always records: the trace marks each step (ProfilerStep#N)
        prof = profile(
            activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1], schedule=lambda step: ProfilerAction.RECORD
        )
        prof.start()
        _state["recorder"] = prof
    else:
        _state["recorder"] = _C._trace_subscribe()
    _state["started"] = time.perf_counter()


def _on_step(optimizer, args, kwargs) -> None:
    _state["steps"] += 1
    skip, count = _window()
    recorder = _state["recorder"]
    if recorder is None and _state["summary"] is None and _state["steps"] == skip:
        _start()
    elif recorder is not None and _state["steps"] < skip + count:
        if hasattr(recorder, "step"):
            recorder.step()
    elif recorder is not None:
        stop()


def stop() -> dict | None:
    """Ends the window (at its last step, or at exit): writes the trace if
    one is recorded, and the summary."""
    recorder = _state["recorder"]
    if recorder is None:
        return _state["summary"]
    _state["recorder"] = None
    wall = time.perf_counter() - _state["started"]
    steps = max(_state["steps"] - _window()[0], 1)
    if isinstance(recorder, _C._TraceBuffer):
        from ..estimation import ops as trace_estimate

        activities = [a for a in _C._trace_take(recorder) if a["depth"] == 0]
        known = [a["estimated_us"] for a in activities if a["estimated_us"] >= 0]
        est_us = sum(known) + sum(
            us for us, _ in trace_estimate.estimate_activities([a for a in activities if a["estimated_us"] < 0])
        )
        _state["summary"] = {
            "trace": None,
            "steps": steps,
            "wall_ms_per_step": 1e3 * wall / steps,
            "device_ms_per_step": sum(a["end_ns"] - a["start_ns"] for a in activities) / 1e6 / steps,
            "estimated_trn2_ms_per_step": est_us / 1e3 / steps,
        }
        return _state["summary"]
    recorder.stop()
    path = trace_path()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    recorder.export_chrome_trace(path)
    summary = summarize(path, steps, wall)
    with open(path + ".summary.json", "w") as f:
        json.dump(summary, f, indent=1)
    _state["summary"] = summary
    print(
        f"torch_neuronx: traced {steps} optimizer steps to {path} (open in https://ui.perfetto.dev); "
        f"estimated Trainium2 device time {summary['estimated_trn2_ms_per_step']:.2f} ms per step, measured "
        f"here {summary['wall_ms_per_step']:.0f} ms",
        file=sys.stderr,
        flush=True,
    )
    return summary


def summary() -> dict | None:
    return _state["summary"]


def install() -> None:
    """At import, when TORCH_NEURONX_TRACE or TORCH_NEURONX_STRICT is set."""
    if _state["hook"] is None:
        _window()  # a bad value fails at import, not at step 2
        _state["hook"] = register_optimizer_step_post_hook(_on_step)

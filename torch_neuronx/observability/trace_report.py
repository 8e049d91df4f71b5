"""A neuron trace (export_chrome_trace's JSON) for a person: time per op
family, measured on the device tracks and estimated on the
estimated-Trainium2 track, the estimate also per engine; and a PNG of both
(`python -m torch_neuronx report --trace trace.json --png step.png`)."""

from __future__ import annotations

import json
import os
from collections import defaultdict

ESTIMATE_TRACK = "estimated Trainium2"
SUFFIX = " (estimated)"

_MATMUL = {
    "mm",
    "addmm",
    "bmm",
    "baddbmm",
    "linear",
    "matmul",
    "convolution",
    "convolution_overrideable",
    "convolution_backward_overrideable",
    "_convolution",
}
_REDUCE = {
    "sum",
    "mean",
    "var",
    "std",
    "var_mean",
    "norm",
    "amax",
    "amin",
    "max",
    "min",
    "argmax",
    "argmin",
    "cumsum",
    "softmax",
    "_softmax",
    "log_softmax",
    "_log_softmax",
    "native_layer_norm",
    "_fused_rms_norm",
    "native_layer_norm_backward",
    "_softmax_backward_data",
    "_log_softmax_backward_data",
    "logsumexp",
    "_fused_rms_norm_backward",
    "nll_loss_forward",
    "nll_loss_backward",
    "linalg_vector_norm",
}
FAMILIES = [
    "matmul & conv",
    "attention",
    "reductions & norms",
    "elementwise & other",
    "copies",
    "collectives",
    "NKI kernels",
    "compiled graphs",
]


def family(name: str, kind: str) -> str:
    if kind == "copy":
        return "copies"
    if kind == "collective":
        return "collectives"
    if kind in ("nki kernel", "kernel"):
        return "NKI kernels"
    if kind == "compiled graph":
        return "compiled graphs"
    op = name.split("::")[-1].split(".")[0]
    if op in _MATMUL:
        return "matmul & conv"
    if "attention" in op:
        return "attention"
    if op in _REDUCE:
        return "reductions & norms"
    return "elementwise & other"


def load(path) -> list[dict]:
    with open(path) as f:
        return json.load(f)["traceEvents"]


def _device_tracks(events):
    """{(pid, tid): track name} of the neuron devices' tracks."""
    devices = {
        e["pid"]
        for e in events
        if e.get("ph") == "M"
        and e.get("name") == "process_name"
        and str(e["args"].get("name", "")).startswith("neuron ")
    }
    return {
        (e["pid"], e["tid"]): e["args"]["name"]
        for e in events
        if e.get("ph") == "M" and e.get("name") == "thread_name" and e["pid"] in devices
    }


def per_family(events) -> tuple[dict, dict]:
    """(measured us per family, estimated us per family and engine). Measured
    counts the outermost slices only (a compiled graph, not also its ops)."""
    tracks = _device_tracks(events)
    measured: dict = defaultdict(float)
    estimated: dict = defaultdict(lambda: defaultdict(float))
    by_track = defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and (e.get("pid"), e.get("tid")) in tracks:
            by_track[(e["pid"], e["tid"])].append(e)
    for key, slices in by_track.items():
        if tracks[key] == ESTIMATE_TRACK:
            for e in slices:
                name = e["name"][: -len(SUFFIX)] if e["name"].endswith(SUFFIX) else e["name"]
                estimated[family(name, e["args"].get("kind", "op"))][e["args"].get("engine", "?")] += e["dur"]
            continue
        end = float("-inf")
        for e in sorted(slices, key=lambda e: (e["ts"], -e["dur"])):
            if e["ts"] >= end - 1e-3:  # not inside the previous outermost slice
                measured[family(e["name"], e["args"].get("kind", "op"))] += e["dur"]
                end = e["ts"] + e["dur"]
    return dict(measured), {k: dict(v) for k, v in estimated.items()}


def format_trace(path, steps: int = 1) -> str:
    measured, estimated = per_family(load(path))
    est_total = {f: sum(v.values()) for f, v in estimated.items()}
    lines = [
        f"trace {path} ({steps} step{'s' if steps != 1 else ''}): time per step, ms",
        f"  {'op family':<22}{'measured here':>14}{'est. Trainium2':>16}",
    ]
    for f in FAMILIES:
        if f in measured or f in est_total:
            lines.append(
                f"  {f:<22}{measured.get(f, 0) / 1e3 / steps:>14.3f}{est_total.get(f, 0) / 1e3 / steps:>16.3f}"
            )
    lines.append(
        f"  {'total':<22}{sum(measured.values()) / 1e3 / steps:>14.3f}{sum(est_total.values()) / 1e3 / steps:>16.3f}"
    )
    engines: dict = defaultdict(float)
    for per_engine in estimated.values():
        for engine, us in per_engine.items():
            engines[engine] += us
    lines.append(
        "  estimated Trainium2 time by bounding engine: "
        + ", ".join(f"{e} {us / 1e3 / steps:.3f}" for e, us in sorted(engines.items(), key=lambda kv: -kv[1]))
    )
    return "\n".join(lines) + "\n"


def draw_png(path, out_png, steps: int = 1, title: str | None = None) -> None:
    """Two panels: per op family, measured here vs estimated on Trainium2 (log
    scale, ms per step); the estimate split by the engine that bounds each op."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    measured, estimated = per_family(load(path))
    fams = [f for f in FAMILIES if f in measured or f in estimated]
    engines = sorted({e for v in estimated.values() for e in v})
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.8))
    y = range(len(fams))
    left.barh(
        [i + 0.2 for i in y],
        [measured.get(f, 0) / 1e3 / steps for f in fams],
        0.4,
        label="measured on this host (emulator)",
    )
    left.barh(
        [i - 0.2 for i in y],
        [sum(estimated.get(f, {}).values()) / 1e3 / steps for f in fams],
        0.4,
        label="estimated Trainium2",
    )
    left.set_yticks(list(y), fams)
    left.set_xscale("log")
    left.set_xlabel("ms per step (log scale)")
    left.legend(loc="lower right", fontsize=8)
    left.set_title("time by op family")
    base = [0.0] * len(fams)
    for engine in engines:
        vals = [estimated.get(f, {}).get(engine, 0) / 1e3 / steps for f in fams]
        right.barh(list(y), vals, left=base, label=engine)
        base = [b + v for b, v in zip(base, vals)]
    right.set_yticks(list(y), fams)
    right.set_xlabel("estimated Trainium2 ms per step")
    right.legend(title="bounding engine", fontsize=8)
    right.set_title("estimate by engine")
    fig.suptitle(title or f"one step of {os.path.basename(str(path))}")
    fig.tight_layout()
    fig.savefig(out_png, dpi=110)
    plt.close(fig)

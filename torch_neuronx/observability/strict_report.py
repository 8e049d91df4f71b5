"""Strict mode's run record (the JSON that TORCH_NEURONX_REPORT names) and
the text of `python -m torch_neuronx report`."""

from __future__ import annotations

import json
import os
import sys
from collections import defaultdict

from .. import settings
from . import strict_findings as _s
from .strict_memory import peak_memory


def run_record() -> dict:
    return {
        "version": 1,
        "argv": list(sys.argv),
        "mode": _s.current_mode(),
        "env_mode": _s._state["env"],
        "optimizer_steps": _s._state["steps"],
        "findings": [f.as_dict() for f in _s.findings()],
        "peak_memory": peak_memory(),
        "trace": _trace_summary(),
    }


def _trace_summary() -> dict | None:
    """The summary of the steps TORCH_NEURONX_TRACE traced in this run, if any."""
    step_trace = sys.modules.get("torch_neuronx.observability.step_trace")
    return None if step_trace is None else step_trace.summary()


def save(path: str) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(run_record(), f, indent=1)
    os.replace(tmp, path)


def _gib(n: int) -> str:
    return f"{n / 2**30:.2f} GiB"


def format_report(record: dict, top: int = 10) -> str:
    """A person's summary of a run record: counts per kind, the top offenders
    with their lines and what to do, peak memory per core."""
    findings = record.get("findings", [])
    argv = " ".join(record.get("argv") or []) or "?"
    lines = [
        f"torch_neuronx strict mode report: {argv}",
        f"{len(findings)} distinct findings, {sum(f['count'] for f in findings)} occurrences, "
        f"{record.get('optimizer_steps', 0)} optimizer steps",
        "",
    ]
    if findings:
        per_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for f in findings:
            per_kind[f["kind"]][0] += 1
            per_kind[f["kind"]][1] += f["count"]
        lines.append(f"  {'KIND':<16}{'DISTINCT':>9}{'COUNT':>9}")
        for kind, (distinct, count) in sorted(per_kind.items(), key=lambda kv: -kv[1][1]):
            lines.append(f"  {kind:<16}{distinct:>9}{count:>9}")
        lines += ["", f"Top offenders ({min(top, len(findings))} of {len(findings)}):"]
        shown = sorted(findings, key=lambda f: -f["count"])[:top]
        for i, f in enumerate(shown, 1):
            lines.append(f"  {i}. [{f['kind']}] {f['op']} x{f['count']} at {f['line']}")
            if f.get("user_line"):
                lines.append(f"     from {f['user_line']}")
            lines.append(f"     {f['detail']}")
        lines += ["", "What to do:"]
        remedies = {}
        for f in shown:  # one line per kind (and per distinct remedy)
            remedies.setdefault((f["kind"], f["remedy"]), None)
        lines += [f"  [{kind}] {remedy}" for kind, remedy in remedies]
    else:
        lines.append("  no findings: nothing seen that would fail or be slow on Trainium")
    memory = record.get("peak_memory", [])
    if memory:
        lines += ["", "Peak memory per NeuronCore (against one logical core's HBM on Trainium):"]
        for m in memory:
            over = "  OVER" if m["peak_bytes"] > m["core_hbm_bytes"] else ""
            lines.append(
                f"  {m['device']:<10}{_gib(m['peak_bytes']):>12} of {_gib(m['core_hbm_bytes'])} "
                f"(LNC={m['lnc']}, {100 * m['peak_bytes'] / m['core_hbm_bytes']:.1f}%){over}"
            )
    traced = record.get("trace")
    if traced:
        where = f" (trace: {traced['trace']})" if traced.get("trace") else ""
        lines += [
            "",
            f"{traced['steps']} optimizer steps as Trainium2 would run them{where}:",
            f"  estimated Trainium2 time per step: {traced['estimated_trn2_ms_per_step']:.2f} ms "
            f"(device busy, host never waited on); here: {traced['wall_ms_per_step']:.0f} ms per step",
        ]
    return "\n".join(lines) + "\n"


def main(path: str | None, trace: str | None = None, steps: int | None = None, png: str | None = None) -> int:
    """`python -m torch_neuronx report [run.json] [--trace t.json] [--png out.png]`
    (default record: $TORCH_NEURONX_REPORT)."""
    from . import trace_report

    path = path or settings.value(_s.REPORT_ENV)
    if not path and not trace:
        print(
            "python -m torch_neuronx report: give the run record (written by a run with "
            f"{_s.ENV}=warn and {_s.REPORT_ENV}=run.json) or --trace",
            file=sys.stderr,
        )
        return 2
    record = {}
    if path:
        try:
            with open(path) as f:
                record = json.load(f)
        except (OSError, ValueError) as e:
            print(f"python -m torch_neuronx report: cannot read {path}: {e}", file=sys.stderr)
            return 1
        print(format_report(record), end="")
    traced = record.get("trace") or {}
    trace = trace or traced.get("trace")
    steps = steps or traced.get("steps") or 1
    if trace:
        print("\n" + trace_report.format_trace(trace, steps), end="")
        if png:
            trace_report.draw_png(trace, png, steps)
            print(f"drew {png}")
    elif png:
        print(
            "python -m torch_neuronx report: --png needs a trace (--trace, or a run with TORCH_NEURONX_TRACE)",
            file=sys.stderr,
        )
        return 2
    return 0

"""Prints what the differential fuzzers ran, and records it for docs/figures.md
(build/bench/fuzz.json, or fuzz_thread.json for the thread-queue half)."""

import os
import sys
from pathlib import Path

from collective_runs import TOTALS
from op_programs import STATS

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _figures import Table, report  # noqa: E402


def _record(session_failed: bool) -> None:
    table = Table(
        "what the fuzzers ran",
        ["fuzzer", "runs", "steps or calls", "compared bitwise", "result"],
        note="Neuron against the CPU (programs) and against gloo (collective sequences), in one run.",
    )
    if STATS:
        steps = {k: v for k, v in STATS.items() if isinstance(k, tuple)}
        compared = sum(v for (_, outcome), v in steps.items() if outcome == "compared")
        raised = sum(v for (_, outcome), v in steps.items() if outcome == "raised alike")
        table.add(
            "eager op programs",
            STATS["programs"],
            compared + raised,
            compared,
            "failed" if session_failed else "passed",
        )
    if TOTALS:
        calls = sum(v for k, v in TOTALS.items() if k.startswith("step "))
        sequences = sum(v for k, v in TOTALS.items() if k.endswith("sequences"))
        table.add(
            "collective sequences (2 and 3 ranks)",
            sequences,
            calls,
            TOTALS["buffers compared"],
            "failed" if session_failed else "passed",
        )
    if table.rows:
        thread = os.environ.get("TORCH_NEURONX_EMU_QUEUE") == "thread"
        command = (
            f"FUZZ_PROGRAMS={os.environ.get('FUZZ_PROGRAMS', '')} FUZZ_SEQUENCES="
            f"{os.environ.get('FUZZ_SEQUENCES', '')}{' TORCH_NEURONX_EMU_QUEUE=thread' if thread else ''} "
            ".venv/bin/python -m pytest -q tests/fuzz  (make fuzz)"
        )
        report("fuzz_thread" if thread else "fuzz", [table], command_line=command)


def pytest_terminal_summary(terminalreporter, exitstatus):
    _record(exitstatus != 0)
    if TOTALS:
        steps = {k[len("step ") :]: v for k, v in TOTALS.items() if k.startswith("step ")}
        terminalreporter.write_line(
            "collective sequences: "
            + ", ".join(f"{v} at {k}" for k, v in TOTALS.items() if k.endswith("sequences"))
            + f"; {sum(steps.values())} calls, counted on every rank that made them ({TOTALS['async calls']} async, "
            f"{TOTALS['side-stream calls']} on a side stream, {TOTALS['bad calls refused by both']} refused by both), "
            f"{TOTALS['buffers compared']} buffers compared bitwise"
        )
        terminalreporter.write_line("  calls: " + ", ".join(f"{k} {v}" for k, v in sorted(steps.items())))
    if not STATS:
        return
    steps = {k: v for k, v in STATS.items() if isinstance(k, tuple)}
    compared = sum(v for (_, outcome), v in steps.items() if outcome == "compared")
    raised = sum(v for (_, outcome), v in steps.items() if outcome == "raised alike")
    terminalreporter.write_line(
        f"op programs: {STATS['programs']} programs, {compared + raised} steps "
        f"({compared} compared, {raised} raised the same exception on both); "
        f"{STATS['programs whose backward failed (memory not checked)']} programs' backward "
        "failed alike, "
        f"{STATS['programs whose values PyTorch keeps alive on the CPU too (memory not checked)']} programs' "
        "values PyTorch keeps alive on the CPU too (their device memory not checked)"
    )
    ops = sorted({name for name, _ in steps})
    terminalreporter.write_line(
        "  per op (compared/raised): "
        + ", ".join(f"{n} {steps.get((n, 'compared'), 0)}/{steps.get((n, 'raised alike'), 0)}" for n in ops)
    )

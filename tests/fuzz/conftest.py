"""Prints what the differential fuzzers ran (docs/reliability.md records it)."""

from collective_runs import TOTALS
from op_programs import STATS


def pytest_terminal_summary(terminalreporter):
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
        "failed alike (their device memory not checked)"
    )
    ops = sorted({name for name, _ in steps})
    terminalreporter.write_line(
        "  per op (compared/raised): "
        + ", ".join(f"{n} {steps.get((n, 'compared'), 0)}/{steps.get((n, 'raised alike'), 0)}" for n in ops)
    )

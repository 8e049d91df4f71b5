"""Prints what the differential fuzzers ran (docs/reliability.md records it)."""

from op_programs import STATS


def pytest_terminal_summary(terminalreporter):
    if not STATS:
        return
    steps = {k: v for k, v in STATS.items() if isinstance(k, tuple)}
    compared = sum(v for (_, outcome), v in steps.items() if outcome == "compared")
    raised = sum(v for (_, outcome), v in steps.items() if outcome == "raised alike")
    terminalreporter.write_line(f"op programs: {STATS['programs']} programs, {compared + raised} steps "
                                f"({compared} compared, {raised} raised the same exception on both); "
                                f"{STATS['programs whose backward failed (memory not checked)']} programs' backward "
                                "failed alike (their device memory not checked)")
    ops = sorted({name for name, _ in steps})
    terminalreporter.write_line("  per op (compared/raised): " + ", ".join(
        f"{n} {steps.get((n, 'compared'), 0)}/{steps.get((n, 'raised alike'), 0)}" for n in ops))

"""The NKI Library yardstick by kernel: every kernel of the library's
`core/` and `experimental/` that ships a torch reference (`*_torch.py`), with
the outcome of the library's tests of it (run.py's results).

A kernel's tests are the test modules that import its reference and are
named for it (`gen_mask_tkg_torch` -> `test_gen_mask_tkg.py`; the attention
tests also import it, as a part), else every module that imports it. A
failure is counted as the project's unless its reason is the library's own
(a module that does not parse, imports AWS's retired `neuronxcc`, or a test
harness error before any kernel runs) or this machine's (a test's own NumPy
data over the process's memory bound: model-size vocabularies and expert
weights in float64).
"""

from __future__ import annotations

import collections
import statistics
from pathlib import Path

LIBRARY_FAULTS = (
    "IndentationError",
    "SyntaxError",
    "neuronxcc",
    "No module named 'nkilib",
    "NameError",
    "KeyError",
    "object has no attribute 'items'",
)
MACHINE_FAULTS = ("_ArrayMemoryError", "MemoryError", "can't allocate memory", "Cannot allocate memory")


def references(checkout: Path) -> list[tuple[str, str, list[str]]]:
    """(kernel, its reference's path in the library, its test modules), by kernel name."""
    tests = sorted((checkout / "test" / "integration" / "nkilib").rglob("test_*.py"))
    texts = {t: t.read_text(errors="replace") for t in tests}
    out = []
    for ref in sorted((checkout / "src").rglob("*_torch.py")):
        name = ref.stem.removesuffix("_torch")
        users = [t for t in tests if ref.stem in texts[t]]
        named = [t for t in users if name in t.stem]
        chosen = named or users
        where = str(ref.parent.relative_to(checkout)).split("nkilib/", 1)[-1]
        out.append((f"{where}/{name}", str(ref.relative_to(checkout)), [str(t.relative_to(checkout)) for t in chosen]))
    return out


def _fault(reason: str, kinds) -> bool:
    return any(k in reason for k in kinds)


def status(rows: list[dict], modules: list[str]) -> tuple[str, str]:
    """(status, reason) of a kernel from its tests' results."""
    ran = [r for r in rows if r["outcome"] not in ("skipped",)]
    bad = [r for r in ran if r["outcome"] in ("failed", "import error")]
    ours = [r for r in bad if not _fault(r["reason"], LIBRARY_FAULTS + MACHINE_FAULTS)]
    passed = [r for r in ran if r["outcome"] == "passed"]
    if not modules:
        return "no test", "no test module of the library imports this reference"
    if not rows:
        return "skipped", "none of its tests is marked fast"
    if ours:
        first = collections.Counter(r["reason"] for r in ours).most_common(1)[0][0]
        return "fails", first
    if passed:
        if bad:
            kind = "the library's" if _fault(bad[0]["reason"], LIBRARY_FAULTS) else "this machine's memory"
            return "passes", f"{len(bad)} more failed for {kind}: {bad[0]['reason']}"
        return "passes", ""
    if bad:
        kind = "library's" if _fault(bad[0]["reason"], LIBRARY_FAULTS) else "machine's"
        return kind, bad[0]["reason"]
    return "skipped", (rows[0].get("reason") or "every fast test skips on this target")


def table_rows(checkout: Path, results: list[dict]):
    """One row per kernel: kernel, tests, passed, failed, skipped, status,
    emulator/reference (median), trn2 estimate us (median), reason."""
    by_module = collections.defaultdict(list)
    for r in results:
        by_module[r["test"].split("::")[0].removeprefix("test/")].append(r)
    rows = []
    for name, _, modules in references(checkout):
        mine = [r for m in modules for r in by_module.get(m.removeprefix("test/"), [])]
        st, why = status(mine, modules)
        passed = [r for r in mine if r["outcome"] == "passed" and r["runs"]]
        ratios = [
            sum(run["seconds"] for run in r["runs"]) / r["reference_seconds"]
            for r in passed
            if r.get("reference_seconds")
        ]
        estimates = [sum(run["estimate_us"] or 0 for run in r["runs"]) for r in passed]
        counts = collections.Counter(r["outcome"] for r in mine)
        rows.append(
            (
                name,
                len(mine),
                counts["passed"],
                counts["failed"] + counts["import error"],
                counts["skipped"],
                st,
                statistics.median(ratios) if ratios else None,
                statistics.median(estimates) if estimates else None,
                why[:160],
            )
        )
    return rows

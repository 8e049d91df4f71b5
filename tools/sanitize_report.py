"""Records `make sanitize`'s results for docs/figures.md: each tier's log in
build/sanitize/ (ctest's and pytest's summary lines) as a row of
build/bench/sanitize.json. Run by `make sanitize` after its three tiers passed
(a tier with a sanitizer report fails the make before this runs).

Run: .venv/bin/python tools/sanitize_report.py
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _figures import Table, report  # noqa: E402

TIERS = [
    ("cpp-asan", "C++ suites under AddressSanitizer + UndefinedBehaviorSanitizer"),
    ("cpp-tsan", "C++ suites under ThreadSanitizer, every emulator stream on a worker thread"),
    ("python-asan", "a Python subset with the ASan + UBSan core and HAL preloaded"),
]


def summary(text: str) -> str:
    ctest = re.search(r"(\d+)% tests passed, (\d+) tests failed out of (\d+)", text)
    if ctest:
        return f"{int(ctest.group(3)) - int(ctest.group(2))} of {ctest.group(3)} suites passed"
    pytest = re.findall(r"^(\d+ passed.*?) in [\d.]+s", text, re.M)
    return pytest[-1] if pytest else "no summary line"


def main() -> None:
    table = Table(
        "sanitizer tiers",
        ["tier", "what runs", "result"],
        note="Any sanitizer report is fatal (halt_on_error): a tier with one fails `make sanitize`. "
        "Suppressions, each with its reason, are in tests/sanitizers/.",
    )
    for tier, what in TIERS:
        log = ROOT / "build" / "sanitize" / f"{tier}.log"
        table.add(tier, what, summary(log.read_text()) if log.exists() else "not run")
    report("sanitize", [table], command_line="make sanitize")


if __name__ == "__main__":
    main()

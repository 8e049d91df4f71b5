"""The NKI Library yardstick: AWS's production NKI kernels
(github.com/aws-neuron/nki-library), unchanged, on `neuron`, through the
library's own tests.

    .venv/bin/python benchmarks/nki_library/run.py PATH/TO/nki-library [pytest arguments]
    make nki-library NKI_LIBRARY=PATH/TO/nki-library

The checkout is read, never changed, and nothing of it enters this tree.
The library's harness has a simulation mode (`--test-mode simulation`) that
runs each test's kernel through a CPU simulator package and checks the
outputs against the test's torch reference at the test's own tolerances;
here shims/nki_cpu_simulator is that package, backed by torch_neuronx.nki on
neuron tensors, and plugin.py records each test. Each test module runs in a
pytest process of its own, its memory bounded. The run selects the tests
the library marks `fast` (its hand-picked shapes) on trn2 (a module none of
whose tests runs on trn2, its kernels Trainium3's, on trn3); the harness skips
the largest shapes in simulation mode, as it does with AWS's simulator.
Extra arguments go to pytest (`-k cumsum`) or name test paths of the checkout
(test/integration/nkilib/core/cumsum).

The harness's PyPI dependencies (requirements.txt) are installed once into
build/nki-library/deps. Prints a table per test module (the library's kernel
families): tests passed, failed, skipped; the median emulator time over the
reference's eager time; the median Trainium2 estimate; the most common
failure. Writes build/bench/nki_library.json and the full per-test results
to build/nki-library/results.json.
"""

from __future__ import annotations

import collections
import json
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import kernels  # noqa: E402
from _figures import ROOT, Table, report  # noqa: E402

BUILD = ROOT / "build" / "nki-library"
DEPS = BUILD / "deps"
RESULTS = BUILD / "results.json"


def install_deps() -> None:
    stamp = DEPS / "requirements.txt"
    wanted = (HERE / "requirements.txt").read_text()
    if stamp.exists() and stamp.read_text() == wanted:
        return
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            str(DEPS),
            "-r",
            HERE / "requirements.txt",
        ],
        check=True,
    )
    stamp.write_text(wanted)


def _memory_bound() -> None:
    """Half the machine's memory for the tests' process (RLIMIT_DATA): some of
    the library's fast tests build model-size data (a cross-entropy over a
    200k vocabulary, 8 GB per array); over the bound a test fails with
    MemoryError instead of the kernel's out-of-memory killer ending the run."""
    half = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    resource.setrlimit(resource.RLIMIT_DATA, (half, half))


def run_tests(checkout: Path, extra: list[str]) -> list[dict]:
    """Each test module in a pytest process of its own (a module that leaks
    or dies costs only its own tests); the results of all, in order."""
    BUILD.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(HERE / "shims"), str(HERE), str(DEPS), str(checkout / "src"), str(checkout)]
        + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    env.setdefault("OMP_NUM_THREADS", "1")
    selection = [a for a in extra if not a.startswith("-")] or ["test/integration/nkilib"]
    options = [a for a in extra if a.startswith("-")]
    modules = sorted(
        str(f.relative_to(checkout))
        for s in selection
        for f in ([checkout / s] if (checkout / s).is_file() else (checkout / s).rglob("test_*.py"))
    )
    results = []
    for i, module in enumerate(modules):
        out = BUILD / "results" / (module.replace("/", "_") + ".json")
        out.parent.mkdir(exist_ok=True)
        out.unlink(missing_ok=True)
        env["NKI_LIBRARY_RESULTS"] = str(out)
        print(f"[{i + 1}/{len(modules)}] {module}", flush=True)
        cmd = [sys.executable, "-m", "pytest", "-p", "plugin", "-p", "no:cacheprovider", module]
        cmd += ["--test-mode", "simulation", "-m", "fast", "--platform-target", "trn2"]
        cmd += ["--output-directory", str(BUILD / "output"), "-q", "--no-header", "-rN", "-p", "no:warnings", *options]
        code = subprocess.run(
            cmd, cwd=checkout, env=env, preexec_fn=_memory_bound, stdout=subprocess.DEVNULL
        ).returncode
        ran = json.loads(out.read_text()) if out.exists() else []
        if code in (0, 5) and not any(r["outcome"] in ("passed", "failed") for r in ran):
            # nothing ran on trn2: a module of Trainium3-only kernels (MX) runs on trn3
            print(f"    no test ran on trn2: {module} on trn3", flush=True)
            out.unlink(missing_ok=True)
            trn3 = [a if a != "trn2" else "trn3" for a in cmd]
            code = subprocess.run(
                trn3, cwd=checkout, env=env, preexec_fn=_memory_bound, stdout=subprocess.DEVNULL
            ).returncode
            ran = [dict(r, target="trn3") for r in json.loads(out.read_text())] if out.exists() else ran
        if ran:
            results += ran
        elif code not in (0, 5):  # 5: no test of this module is marked fast
            results.append(
                {"test": module, "outcome": "import error", "reason": f"pytest died (exit {code})", "runs": []}
            )
    return results


def _module(test_id: str) -> str:
    path = test_id.split("::")[0]
    return path.split("nkilib/", 1)[-1].removesuffix(".py")


def _library_fault(reason: str) -> bool:
    """A test module that fails in the library itself: a syntax error in its
    source, or an import of AWS's retired neuronxcc namespace."""
    return any(s in reason for s in ("IndentationError", "SyntaxError", "neuronxcc"))


def tables(results: list[dict]) -> list[Table]:
    by_module = collections.defaultdict(list)
    for r in results:
        by_module[_module(r["test"])].append(r)
    t = Table(
        "NKI Library tests on neuron",
        ["test module", "tests", "passed", "failed", "skipped", "emulator/reference", "trn2 est. us", "first failure"],
        note="AWS's NKI Library tests marked fast, in the library's simulation mode with torch_neuronx.nki as the "
        "simulator; emulator/reference is the median kernel time on neuron over the torch reference's eager time",
    )
    totals = collections.Counter()
    for module in sorted(by_module):
        rows = by_module[module]
        outcomes = collections.Counter(r["outcome"] for r in rows)
        failures = [r["reason"] for r in rows if r["outcome"] in ("failed", "import error")]
        if failures and all(_library_fault(f) for f in failures) and not outcomes["passed"]:
            outcomes = collections.Counter({"library's": len(rows)})
        ratios = [
            sum(run["seconds"] for run in r["runs"]) / r["reference_seconds"]
            for r in rows
            if r["outcome"] == "passed" and r["runs"] and r.get("reference_seconds")
        ]
        estimates = [
            sum(run["estimate_us"] or 0 for run in r["runs"]) for r in rows if r["outcome"] == "passed" and r["runs"]
        ]
        first = collections.Counter(failures).most_common(1)
        t.add(
            module,
            len(rows),
            outcomes["passed"],
            outcomes["failed"] + outcomes["import error"],
            outcomes["skipped"],
            statistics.median(ratios) if ratios else None,
            statistics.median(estimates) if estimates else None,
            ("(the library's) " if outcomes["library's"] else "") + (first[0][0][:120] if first else ""),
        )
        totals.update(outcomes)
        totals["modules"] += 1
        totals["modules passing"] += bool(outcomes["passed"]) and not (outcomes["failed"] + outcomes["import error"])
    s = Table(
        "NKI Library totals", ["test modules", "all tests pass", "tests", "passed", "failed", "skipped", "library's"]
    )
    s.add(
        totals["modules"],
        totals["modules passing"],
        sum(len(v) for v in by_module.values()),
        totals["passed"],
        totals["failed"] + totals["import error"],
        totals["skipped"],
        totals["library's"],
    )
    return [s, t]


def kernel_tables(checkout: Path, results: list[dict]) -> list[Table]:
    """The kernels with a torch reference (kernels.py), and how many pass."""
    t = Table(
        "NKI Library kernels with a torch reference",
        ["kernel", "tests", "passed", "failed", "skipped", "status", "emulator/reference", "trn2 est. us", "reason"],
        note="each kernel's tests (the library's test modules of its *_torch.py reference), fast marks, trn2; "
        "status: passes (every test that ran passed, or failed for the library's or this machine's reasons), fails "
        "(a failure of the project's), library's / machine's (every test that ran failed for that reason), skipped",
    )
    rows = kernels.table_rows(checkout, results)
    for row in rows:
        t.add(*row)
    counts = collections.Counter(row[5] for row in rows)
    counted = counts["passes"] + counts["fails"]
    s = Table(
        "NKI Library kernels: totals",
        ["kernels", "passes", "fails", "the library's", "this machine's", "skipped", "passing share"],
        note="the passing share counts the kernels that pass or fail for the project's reasons",
    )
    s.add(
        len(rows),
        counts["passes"],
        counts["fails"],
        counts["library's"],
        counts["machine's"],
        counts["skipped"] + counts["no test"],
        counts["passes"] / counted if counted else None,
    )
    return [s, t]


def _commit(checkout: Path) -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"


def main() -> int:
    if len(sys.argv) < 2 or not (Path(sys.argv[1]) / "test" / "integration" / "nkilib").is_dir():
        sys.exit(
            f"usage: {sys.argv[0]} PATH/TO/nki-library [pytest arguments] (a checkout with test/integration/nkilib)"
        )
    checkout = Path(sys.argv[1]).resolve()
    install_deps()
    results = run_tests(checkout, sys.argv[2:])
    RESULTS.write_text(json.dumps(results, indent=1))
    report(
        "nki_library",
        kernel_tables(checkout, results) + tables(results),
        command_line=f"make nki-library NKI_LIBRARY=<aws-neuron/nki-library checkout at {_commit(checkout)}>",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

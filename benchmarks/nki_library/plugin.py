"""pytest plugin of the NKI Library yardstick (run.py loads it with -p).

The library's own tests run unchanged in their simulation mode, with
torch_neuronx's NKI as the simulator (shims/nki_cpu_simulator). This plugin
only adapts and observes:
- it provides the two modules the library's test harness imports but its
  public repository does not hold: `test.utils.perf_analysis_private`
  (profiles hardware runs) and `test.utils.scripts.remote_lock_scripts`
  (locks cores on remote hosts); simulation uses neither, so here each name
  raises if it is ever called;
- its Orchestrator's simulation path reads `self._compiled_kernel`, which
  only its compile step sets (the step simulation skips): the plugin gives
  the class a `None` default, as a kernel that was not compiled has;
- it deselects tests marked trace_only (they need AWS's compiler, and run
  no kernel);
- after each test it returns the emulator's cached device memory to the
  host (`torch.neuron.empty_cache()`, with a garbage collection every 16
  tests): device memory is host memory here,
  and a test's freed tensors held in the cache would count against the next
  test's host memory bound (run.py), which a chip's separate HBM does not;
- it records, per test, the outcome, the first line of a failure, every
  kernel call (shims/nki_cpu_simulator.RUNS) and the reference's time (the
  harness's LazyGoldenGenerator.computation_time), into the JSON file named
  by NKI_LIBRARY_RESULTS (rewritten after each test, so a run that dies
  keeps what it did)."""

import json
import os
import sys
import types

import pytest


class _HardwareOnly:
    """A name of AWS's internal harness that only hardware runs use."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("the NKI Library harness's hardware path is AWS-internal; the yardstick only simulates")

    def __class_getitem__(cls, item):
        return cls


def _absent(name, **names):
    module = types.ModuleType(name)
    module.__path__ = []
    module.__dict__.update(names)
    sys.modules[name] = module


_absent("test.utils.perf_analysis_private", analyze_trace=_HardwareOnly)
_absent("test.utils.scripts")
_absent("test.utils.scripts.remote_lock_scripts", LockResult=_HardwareOnly, LockStatus=_HardwareOnly)

RESULTS: list = []


def pytest_collection_modifyitems(config, items):
    kept = [item for item in items if item.get_closest_marker("trace_only") is None]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in kept])
        items[:] = kept


_golden_times: list = []


def _observe_orchestrator():
    orch = sys.modules.get("test.utils.test_orchestrator")
    if orch is None or getattr(orch.Orchestrator.execute, "_yardstick", False):
        return
    execute = orch.Orchestrator.execute
    if not hasattr(orch.Orchestrator, "_compiled_kernel"):
        orch.Orchestrator._compiled_kernel = None

    def observed(self, kernel_args, *args, **kwargs):
        try:
            return execute(self, kernel_args, *args, **kwargs)
        finally:
            golden = getattr(getattr(kernel_args, "validation_args", None), "golden_output", None)
            _golden_times.append(getattr(golden, "computation_time", None))

    observed._yardstick = True
    orch.Orchestrator.execute = observed


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    _observe_orchestrator()
    yield


_teardowns = [0]


def pytest_runtest_teardown(item, nextitem):
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "neuron"):
        _teardowns[0] += 1
        if _teardowns[0] % 16 == 0:  # a full collection of a large heap costs about a second: now and then
            import gc

            gc.collect()
        torch.neuron.empty_cache()


def _first_line(report) -> str:
    text = getattr(report, "longrepr", None)
    crash = getattr(text, "reprcrash", None)
    message = crash.message if crash is not None else str(text or "")
    return message.strip().splitlines()[0][:300] if message.strip() else ""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    sim = sys.modules.get("nki_cpu_simulator")
    if report.when == "setup" and report.outcome != "passed" or report.when == "call":
        RESULTS.append(
            {
                "test": item.nodeid,
                "outcome": "skipped" if report.skipped else report.outcome,
                "reason": _first_line(report) if not report.passed else "",
                "seconds": call.duration,
                "runs": list(sim.RUNS) if sim is not None else [],
                "reference_seconds": _golden_times[-1] if _golden_times else None,
            }
        )
        if sim is not None:
            sim.RUNS.clear()
        _golden_times.clear()
        _write()


def _error_line(report) -> str:
    """The exception of a collection error (its `E   ...` line), not the first frame of its traceback."""
    text = str(getattr(report, "longrepr", "") or "")
    errors = [line[1:].strip() for line in text.splitlines() if line.startswith("E ")]
    return (errors[-1] if errors else _first_line(report))[:300]


def pytest_collectreport(report):
    if report.failed:  # a test module that does not import: all its tests stop there
        RESULTS.append(
            {"test": report.nodeid, "outcome": "import error", "reason": _error_line(report), "seconds": 0, "runs": []}
        )
        _write()


def _write():
    """After every test, so a run that dies keeps what it did."""
    path = os.environ.get("NKI_LIBRARY_RESULTS")
    if path:
        with open(path + ".partial", "w") as f:
            json.dump(RESULTS, f, indent=1)
        os.replace(path + ".partial", path)

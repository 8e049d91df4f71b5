"""Strict mode (torch_neuronx.strict, TORCH_NEURONX_STRICT): findings with
their source lines, deduplication, warn once / raise, the run record and the
report command, and the seeded script (one problem of each kind on a known
line) against a clean one."""

import contextlib
import io
import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch
from helpers.processes import TESTS, worker_env

from torch_neuronx import StrictModeError, StrictModeWarning, strict
from torch_neuronx.__main__ import main as cli_main

findings_module = sys.modules["torch_neuronx.observability.strict_findings"]
events_module = sys.modules["torch_neuronx.observability.strict_events"]
SEEDED, CLEAN = TESTS / "helpers" / "strict_seeded.py", TESTS / "helpers" / "strict_clean.py"
SEEDED_ENV = {"NEURON_LOGICAL_NC_CONFIG": "1", "TORCH_NEURONX_EMU_HBM": "16G", "TORCH_NEURONX_FALLBACK_WARN": "0"}


@pytest.fixture(autouse=True)
def _fresh():
    strict.reset()
    yield
    strict.reset()


def expected_marks(path: Path) -> list[tuple[str, str, int]]:
    """(kind, op or "", line) of each `# expect: kind [op]` mark."""
    out = []
    for n, text in enumerate(path.read_text().splitlines(), 1):
        m = re.search(r"# expect: (\w+)\s*(\S*)", text)
        if m:
            out.append((m.group(1), m.group(2), n))
    return out


def start(script: Path, mode: str, report: Path | None = None) -> subprocess.Popen:
    extra = {"TORCH_NEURONX_REPORT": str(report)} if report else {}
    env = worker_env(TORCH_NEURONX_STRICT=mode, **SEEDED_ENV, **extra)
    return subprocess.Popen(
        [sys.executable, str(script)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_record_dedups_counts_and_warns_once():
    with strict("warn"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            findings_module.record("fallback", "aten::foo", "ran on the host")  # one line, three times
        findings_module.record("fallback", "aten::foo", "ran on the host")  # another line
    found = strict.findings()
    assert [f.count for f in found] == [3, 1]
    here = Path(__file__).resolve()
    assert all(f.line.startswith(f"{here}:") and f.user_line is None for f in found)
    msgs = [w for w in caught if issubclass(w.category, StrictModeWarning)]
    assert len(msgs) == 2 and msgs[0].filename == str(here) and "aten::foo" in str(msgs[0].message)


def test_error_mode_raises_with_op_line_and_remedy():
    line = sys._getframe().f_lineno + 2
    with pytest.raises(StrictModeError) as info, strict("error"):
        findings_module.record("float64", "aten::mul.Tensor", "computes in Double")
    assert isinstance(info.value, RuntimeError)
    text = str(info.value)
    assert "aten::mul.Tensor" in text and f"test_strict.py:{line}" in text and "float32 or bfloat16" in text
    assert strict.active_mode() == "off"
    with strict("error"), strict("off"):  # "off" pauses an outer mode
        assert findings_module.record("float64", "aten::add", "x") is None


def test_locate_keeps_the_library_line_and_the_users_line():
    lib = findings_module._LIBS[-1] + "transformers/models/llama.py"
    frames = [(torch.__file__, 10), (lib, 42), ("/home/me/train.py", 7), ("/home/me/run.py", 3)]
    assert findings_module.locate(frames=frames) == (f"{lib}:42", "/home/me/train.py:7")
    assert findings_module.locate(frames=[("/home/me/train.py", 7)]) == ("/home/me/train.py:7", None)


def test_memory_limit_is_one_logical_cores_hbm():
    assert events_module.instance_cores()[0] == torch.neuron.device_count() == 4  # one trn2 chip at LNC=2
    from torch_neuronx.observability.strict_memory import core_hbm

    assert core_hbm(0) == (24 * 2**30, 2, "NeuronCore-v3")


def test_process_group_over_the_instance(monkeypatch):
    with strict("warn"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        events_module.check_process_group(4)
        assert strict.findings() == []
        events_module.check_process_group(5)
        monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")  # 2 ranks per host: fits
        events_module.check_process_group(64)
    [f] = strict.findings()
    assert f.kind == "process_group" and "5 ranks" in f.detail and "has 4" in f.detail


def test_dynamic_shapes_are_refused_when_the_graph_runs():
    torch._dynamo.reset()
    fn = torch.compile(lambda t: t * 3, backend="neuron", dynamic=True)
    line = sys._getframe().f_lineno + 2
    with pytest.raises(StrictModeError, match="dynamic_shape") as info, strict("error"):
        fn(torch.ones(5, device="neuron"))
    assert f"test_strict.py:{line}" in str(info.value)
    torch._dynamo.reset()


def test_report_command_reads_the_run_record(tmp_path):
    record = {
        "argv": ["train.py"],
        "optimizer_steps": 5,
        "peak_memory": [{"device": "neuron:0", "peak_bytes": 30 * 2**30, "core_hbm_bytes": 24 * 2**30, "lnc": 2}],
        "findings": [
            {
                "kind": "host_sync",
                "op": "aten::_local_scalar_dense",
                "detail": "d",
                "line": "/x/llama.py:9",
                "user_line": "train.py:3",
                "remedy": "keep it on the device",
                "count": 40,
            },
            {
                "kind": "fallback",
                "op": "aten::foo",
                "detail": "d",
                "line": "train.py:5",
                "user_line": None,
                "remedy": "r",
                "count": 2,
            },
        ],
    }
    path = tmp_path / "run.json"
    path.write_text(json.dumps(record))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main(["report", str(path)]) == 0
    text = out.getvalue()
    assert re.search(r"host_sync\s+1\s+40", text) and re.search(r"fallback\s+1\s+2", text)
    assert text.index("aten::_local_scalar_dense x40") < text.index("aten::foo x2")
    assert "/x/llama.py:9" in text and "from train.py:3" in text and "OVER" in text
    assert cli_main(["report", str(tmp_path / "missing.json")]) == 1


def test_seeded_script_finds_every_kind_on_its_line_and_clean_script_none(tmp_path):
    seeded, clean = start(SEEDED, "warn", tmp_path / "seeded.json"), start(CLEAN, "warn", tmp_path / "clean.json")
    errors = start(SEEDED, "error")
    outs = {
        name: (p, *p.communicate(timeout=180)) for name, p in (("seeded", seeded), ("clean", clean), ("error", errors))
    }
    for name in ("seeded", "clean"):
        p, out, err = outs[name]
        assert p.returncode == 0, f"{name}: exit {p.returncode}\n{out}\n{err}"
    found = json.loads((tmp_path / "seeded.json").read_text())["findings"]
    for kind, op, line in expected_marks(SEEDED):
        at = [f for f in found if f["kind"] == kind and f["line"] == f"{SEEDED}:{line}"]
        assert at, f"no {kind} finding at line {line}: {found}"
        assert not op or any(f["op"].startswith(op) for f in at), (op, at)
    assert "strict mode report" in outs["seeded"][2] and "Top offenders" in outs["seeded"][2]
    clean_record = json.loads((tmp_path / "clean.json").read_text())
    assert clean_record["findings"] == [] and clean_record["optimizer_steps"] == 3, clean_record
    assert "no findings" in outs["clean"][2]
    # error mode: the first problem raises, naming op, line and what to do
    p, out, err = outs["error"]
    first_kind, first_op, first_line = expected_marks(SEEDED)[0]
    assert p.returncode != 0 and "StrictModeError" in err, err
    message = next(
        line
        for line in err.splitlines()
        if line.startswith("torch_neuronx.observability.strict_findings.StrictModeError")
    )
    assert f"{SEEDED}:{first_line}" in message and first_kind in message and first_op in message, message
    assert "What to do:" in message and err.count("StrictModeError:") == 1, err

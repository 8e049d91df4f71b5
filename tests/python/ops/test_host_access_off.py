"""A driver whose memory the host cannot address gets the copying path
everywhere the emulator runs host code (runtime/NeuronHostAccess.h): with the
emulator withholding the capability (TORCH_NEURONX_EMU_HOST_ADDRESSABLE=0),
the OpInfo sweep's fast subset, a tiny Llama training step, a compiled MLP
and the collectives give the results they give with it, and the price shows
as counted copies (host_staging_stats, fallback ops, host-staged graphs),
never silently."""

import csv
import pathlib
import re
import subprocess
import sys

from helpers.dist_launch import assert_all_ok, launch
from helpers.processes import run_ok, scrubbed_env

ROOT = pathlib.Path(__file__).resolve().parents[3]
# Ops every model uses, with their backward rows.
FAST_SUBSET = (
    "add,mul,sub,div,matmul,mm,bmm,addmm,sum,mean,softmax,log_softmax,nn.functional.gelu,"
    "nn.functional.silu,exp,tanh,sigmoid,cat,stack,index_select,gather,where,transpose,reshape,clone,"
    "nn.functional.layer_norm,nn.functional.embedding,cumsum,amax,argmax,topk,masked_fill,"
    "nn.functional.cross_entropy"
)


def staged_counts(stdout: str) -> tuple[int, int]:
    """(staged copies to the host, fallback ops) from host_staged.py's report."""
    m = re.search(r"'to_host_copies': (\d+).*fallback ops (\d+)", stdout)
    assert m, stdout
    return int(m.group(1)), int(m.group(2))


def test_capability_switch_is_reported():
    out = run_ok("device_info", env={"TORCH_NEURONX_EMU_HOST_ADDRESSABLE": "0"})
    assert "device memory is not host-addressable" in out and "TORCH_NEURONX_EMU_HOST_ADDRESSABLE=0" in out, out
    assert "device memory is host-addressable" in run_ok("device_info")


def test_opinfo_fast_subset(tmp_path):
    table = tmp_path / "staged.tsv"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tests" / "sweep" / "opinfo_sweep.py"),
            "--max-samples",
            "2",
            "--staged",
            "--ops",
            FAST_SUBSET,
            "--out",
            str(table),
        ],
        env=scrubbed_env(OMP_NUM_THREADS="1", TORCH_NEURONX_EMU_HOST_ADDRESSABLE="0"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(table) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    failing = {(r["op"], r["dtype"]): r["reason"] for r in rows if r["result"] == "fail"}
    assert not failing, failing
    assert sum(r["result"] == "pass" for r in rows) > 150
    staged = re.search(r"host-staged: (\d+) ops .*'to_host_copies': (\d+)", proc.stdout)
    assert staged and int(staged.group(1)) > 20 and int(staged.group(2)) > 0, proc.stdout


def test_tiny_llama_step():
    out = run_ok("host_staged", "tiny_llama_step", timeout=300)
    assert "tiny llama step ok" in out
    copies, fallback_ops = staged_counts(out)
    assert copies > 0 and fallback_ops > 10, out


def test_compiled_mlp():
    out = run_ok("host_staged", "compiled_mlp", timeout=300)
    assert "compiled mlp ok" in out and "host_staged_graphs 1" in out and "graphs_compiled 0" in out, out
    assert run_ok("compiled_mlp", timeout=300).count("host_staged_graphs 0") == 1  # addressable: compiled


def test_collectives(tmp_path):
    results = launch("host_staged", 2, tmp_path, timeout=300, args=["collectives_every_op"])
    assert_all_ok(results)
    for r in results:
        copies, _ = staged_counts(r.stdout)
        assert copies > 0, r.stdout

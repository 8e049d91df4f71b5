"""The demo's Hugging Face workloads on neuron against the CPU, in one run:

- generation tokens/s of examples/demo_generate.py's workload (tiny Qwen3,
  bf16, 4 prompts x 16 new tokens, static cache, chunked prefill): TP=2 with
  compiled decode (the demo), 1 NeuronCore compiled and eager, CPU eager and
  with Inductor;
- TRL SFTTrainer steps/s with the demo's training settings: neuron 1
  process, neuron 2 processes with FSDP (DistributedConfig(fsdp_size=2)),
  CPU; eager and with --torch_compile.

Each configuration runs in its own process (benchmarks/models/hf_generate_worker.py,
benchmarks/models/hf_sft_worker.py). One-process runs use both cores
(OMP_NUM_THREADS=2); torchrun runs use one thread per process,
so both use the whole 2-core machine. Ratios are against CPU eager.

- the same generation with a model of hidden size 1024 (built once as
  build/artifacts/qwen3-h1024): TP=2 against one process of 1 and 2 threads.

Run: .venv/bin/python benchmarks/models/hf_workloads.py [--wide-only [HIDDEN]]
     (--wide-only reports as hf_workloads_wide: a section of its own in docs/figures.md)
"""

import json
import os
import subprocess
import sys
import tempfile

import _shared  # noqa: F401  (benchmarks/ on sys.path: the shared helpers)
from _figures import Table, report
from _shared import ROOT

HERE = ROOT / "benchmarks" / "models"
GENERATE_NOTE = (
    "Each configuration in its own process (benchmarks/models/hf_generate_worker.py): the median of 9 generate calls "
    "after one; one-process runs with 2 threads unless named, torchrun ranks with 1 thread each."
)
SFT_NOTE = (
    "Each configuration in its own process (benchmarks/models/hf_sft_worker.py): 15 steps, the first 3 not timed; "
    "one-process runs with 2 threads, torchrun ranks with 1 thread each."
)


def run(worker: str, args: list[str], nproc: int = 0, threads: int = 0) -> dict:
    """Runs a worker in fresh processes (torchrun when nproc > 0); returns its
    RESULT. Threads per process: 1 under torchrun, else 2 (unless given)."""
    env = dict(
        os.environ,
        OMP_NUM_THREADS=str(threads or (1 if nproc else 2)),
        HF_DEACTIVATE_ASYNC_LOAD="1",
        TOKENIZERS_PARALLELISM="false",
        TRANSFORMERS_VERBOSITY="error",
    )
    launcher = ["-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}"] if nproc else []
    proc = subprocess.run(
        [sys.executable, *launcher, str(HERE / worker), *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    results = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode != 0 or not results:
        raise SystemExit(f"{worker} {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(results[-1][len("RESULT ") :])


def table(title: str, unit: str, rows: list[tuple[str, dict]], key: str, base: str, note: str) -> Table:
    ref = dict(rows)[base][key]
    t = Table(title, ["configuration", unit, f"vs {base}"], note=f"Against {base}, in the same run. {note}")
    for name, result in rows:
        t.add(name, result[key], result[key] / ref)
    return t


def wide_model(artifacts, hidden: int) -> str:
    """qwen3 with this hidden size (heads of 128, 2 KV heads, 4 layers; 45M
    parameters at 1024, random weights), built once beside the demo's artifacts."""
    from transformers import AutoTokenizer

    from examples import build_artifacts

    out = artifacts / f"qwen3-h{hidden}"
    if not (out / "config.json").exists():
        tokenizer = AutoTokenizer.from_pretrained(artifacts / "tokenizer")
        build_artifacts.build_model("qwen3", tokenizer, out, hidden_size=hidden, heads=hidden // 128)
    return str(out)


def wide_generation(artifacts, hidden: int = 1024) -> list[Table]:
    """Where TP should pay: layers whose arithmetic outweighs op overhead."""
    model = wide_model(artifacts, hidden)
    rows = [
        ("neuron TP=2 (1 thread per rank), eager", run("hf_generate_worker.py", [model, "--tp"], 2)),
        (
            "neuron TP=2 (1 thread per rank), compiled decode",
            run("hf_generate_worker.py", [model, "--tp", "--compiled"], 2),
        ),
        ("neuron 1 process, 1 thread, eager", run("hf_generate_worker.py", [model], threads=1)),
        ("neuron 1 process, 2 threads, eager", run("hf_generate_worker.py", [model])),
        ("neuron 1 process, 2 threads, compiled decode", run("hf_generate_worker.py", [model, "--compiled"])),
        ("CPU eager, 1 thread", run("hf_generate_worker.py", [model, "--device", "cpu"], threads=1)),
        ("CPU eager, 2 threads", run("hf_generate_worker.py", [model, "--device", "cpu"])),
    ]
    return [
        table(
            f"generation at hidden size {hidden} (4 prompts x 16 new tokens, bf16, static cache)",
            "tokens/s",
            rows,
            "tokens_per_s",
            "CPU eager, 2 threads",
            GENERATE_NOTE,
        ),
        table(
            f"generation at hidden size {hidden}, against one core",
            "tokens/s",
            rows,
            "tokens_per_s",
            "neuron 1 process, 1 thread, eager",
            GENERATE_NOTE,
        ),
    ]


def main() -> None:
    from examples import build_artifacts

    artifacts = build_artifacts.main(["--out", str(ROOT / "build" / "artifacts")])
    model, dataset = str(artifacts / "qwen3-tiny"), str(artifacts / "qa-chat")
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="neuron_bench_inductor_"))
    if "--wide-only" in sys.argv:  # [--wide-only [HIDDEN]]: a section of its own in docs/figures.md
        rest = sys.argv[sys.argv.index("--wide-only") + 1 :]
        report("hf_workloads_wide", wide_generation(artifacts, int(rest[0]) if rest else 1024))
        return

    generation = [
        ("neuron TP=2, compiled decode (the demo)", run("hf_generate_worker.py", [model, "--tp", "--compiled"], 2)),
        ("neuron 1 core, compiled decode", run("hf_generate_worker.py", [model, "--compiled"])),
        ("neuron 1 core, eager", run("hf_generate_worker.py", [model])),
        ("CPU, Inductor decode", run("hf_generate_worker.py", [model, "--device", "cpu", "--compiled"])),
        ("CPU eager", run("hf_generate_worker.py", [model, "--device", "cpu"])),
    ]
    tables = [
        table(
            "generation (4 prompts x 16 new tokens, bf16, static cache)",
            "tokens/s",
            generation,
            "tokens_per_s",
            "CPU eager",
            GENERATE_NOTE,
        )
    ]
    tables += wide_generation(artifacts)

    with tempfile.TemporaryDirectory() as out:
        sft = [model, dataset, out]
        training = [
            ("neuron 1 process, eager", run("hf_sft_worker.py", sft)),
            ("neuron 2 processes FSDP, eager", run("hf_sft_worker.py", sft, 2)),
            ("CPU eager", run("hf_sft_worker.py", [*sft, "--device", "cpu"])),
            ("neuron 1 process, compiled", run("hf_sft_worker.py", [*sft, "--compiled"])),
            ("neuron 2 processes FSDP, compiled (the demo)", run("hf_sft_worker.py", [*sft, "--compiled"], 2)),
            ("CPU, compiled (Inductor)", run("hf_sft_worker.py", [*sft, "--device", "cpu", "--compiled"])),
        ]
    tables += [
        table(
            "SFTTrainer steps/s (batch 4 x 128 tokens per process, bf16)",
            "steps/s",
            training,
            "steps_per_s",
            "CPU eager",
            SFT_NOTE,
        ),
        table("SFTTrainer tokens/s (all processes)", "tokens/s", training, "tokens_per_s", "CPU eager", SFT_NOTE),
    ]
    report("hf_workloads", tables)


if __name__ == "__main__":
    main()

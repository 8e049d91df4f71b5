"""The demo's Hugging Face workloads on neuron against the CPU, in one run
(issue 6):

- generation tokens/s of examples/demo_generate.py's workload (tiny Qwen3,
  bf16, 4 prompts x 16 new tokens, static cache, chunked prefill): TP=2 with
  compiled decode (the demo), 1 NeuronCore compiled and eager, CPU eager and
  with Inductor;
- TRL SFTTrainer steps/s with the demo's training settings: neuron 1
  process, neuron 2 processes with FSDP (DistributedConfig(fsdp_size=2)),
  CPU; eager and with --torch_compile.

Each configuration runs in its own process (benchmarks/hf_generate_worker.py,
benchmarks/hf_sft_worker.py). One-process runs use both cores
(OMP_NUM_THREADS=2); torchrun runs use one thread per process (decision 10),
so both use the whole 2-core machine. Ratios are against CPU eager.

Run: .venv/bin/python benchmarks/hf_workloads.py
"""

import json
import os
import socket
import subprocess
import sys
import tempfile
import time

from _paths import ROOT

HERE = ROOT / "benchmarks"


def run(worker: str, args: list[str], nproc: int = 0) -> dict:
    """Runs a worker in fresh processes (torchrun when nproc > 0); returns its RESULT."""
    env = dict(os.environ, OMP_NUM_THREADS="1" if nproc else "2", HF_DEACTIVATE_ASYNC_LOAD="1",
               TOKENIZERS_PARALLELISM="false", TRANSFORMERS_VERBOSITY="error")
    launcher = ["-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}"] if nproc else []
    proc = subprocess.run([sys.executable, *launcher, str(HERE / worker), *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    results = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode != 0 or not results:
        raise SystemExit(f"{worker} {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(results[-1][len("RESULT "):])


def table(title: str, unit: str, rows: list[tuple[str, dict]], key: str, base: str) -> None:
    ref = dict(rows)[base][key]
    print(f"\n{title}\n| configuration | {unit} | vs {base} |\n|---|---|---|")
    for name, result in rows:
        print(f"| {name} | {result[key]:.2f} | {result[key] / ref:.2f}x |")


def main() -> None:
    from examples import build_artifacts

    artifacts = build_artifacts.main(["--out", str(ROOT / "build" / "artifacts")])
    model, dataset = str(artifacts / "qwen3-tiny"), str(artifacts / "qa-chat")
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="neuron_bench_inductor_"))
    print(f"host: {socket.gethostname()}, {os.cpu_count()} cores; {time.strftime('%Y-%m-%d')}")

    generation = [
        ("neuron TP=2, compiled decode (the demo)", run("hf_generate_worker.py", [model, "--tp", "--compiled"], 2)),
        ("neuron 1 core, compiled decode", run("hf_generate_worker.py", [model, "--compiled"])),
        ("neuron 1 core, eager", run("hf_generate_worker.py", [model])),
        ("CPU, Inductor decode", run("hf_generate_worker.py", [model, "--device", "cpu", "--compiled"])),
        ("CPU eager", run("hf_generate_worker.py", [model, "--device", "cpu"])),
    ]
    table("generation (4 prompts x 16 new tokens, bf16, static cache)", "tokens/s", generation, "tokens_per_s",
          "CPU eager")

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
    table("SFTTrainer steps/s (batch 4 x 128 tokens per process, bf16)", "steps/s", training, "steps_per_s",
          "CPU eager")
    table("SFTTrainer tokens/s (all processes)", "tokens/s", training, "tokens_per_s", "CPU eager")


if __name__ == "__main__":
    main()

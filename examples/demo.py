"""The main job (`make demo`): Hugging Face code written for Trainium, run
unchanged on 2 emulated NeuronCores.

1. Builds the local artifacts (examples/build_artifacts.py): a tokenizer with
   a chat template, a tiny random-weight Qwen3-style model and a chat dataset
   of short questions and answers.
2. Fine-tunes the model with TRL's SFTTrainer: the announcement's script
   (examples/sft_neuron_example.py) under `torchrun --nproc_per_node=2` with
   TP_SIZE x FSDP_SIZE = 1 x 2, bf16, wrapped packing and --torch_compile true.
   The announcement's flags (lr 2e-5, packing to 2048, accumulation 4) show no
   learning on a tiny model in minutes, so they are scaled: lr 3e-3, packing to
   128 tokens, no accumulation, 3 epochs.
3. Saves the checkpoint (a plain Transformers checkpoint) and generates
   answers from it with TP=2, static cache, chunked prefill and compiled
   decode (examples/demo_generate.py), printing tokens/s, recompilations and
   CPU fallbacks.
4. Runs the announcement's generation script as written (examples/generate_tp.py,
   128 new tokens, 512-token prefill chunks) on the checkpoint, TP=2.
5. Runs the announcement's Diffusers script as written (examples/diffusers_tp.py)
   with a tiny Qwen-Image 2.1 pipeline, TP=2 with compiled repeated blocks,
   at 256x256 in 8 steps (the announcement's 1024x1024 in 40 steps takes minutes
   here), saving the PNG.
6. What Trainium would do (docs/observe.md, docs/estimates.md): steps 2 and 3
   run in strict mode (TORCH_NEURONX_STRICT=warn) and write run records; the
   SFT traces optimizer steps 3-5 (TORCH_NEURONX_TRACE) and the generation
   one generate, as Perfetto traces with an estimated-Trainium2 track. The
   demo ends with the strict-mode summaries, the estimated Trainium2 time of
   a training step and tokens/s of generation, and a PNG of a step's time by
   op family and engine.

Run: make demo   (or .venv/bin/python examples/demo.py [--out build/demo])
"""

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SFT_FLAGS = [
    "--dataset_train_split",
    "train_sft",
    "--dtype",
    "bfloat16",
    "--max_length",
    "128",
    "--packing",
    "true",
    "--packing_strategy",
    "wrapped",
    "--learning_rate",
    "3e-3",
    "--warmup_steps",
    "0.03",
    "--num_train_epochs",
    "3",
    "--logging_steps",
    "5",
    "--per_device_train_batch_size",
    "4",
    "--gradient_accumulation_steps",
    "1",
    "--save_only_model",
    "true",
    "--torch_compile",
    "true",
    "--report_to",
    "none",
]


def section(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 66 - len(title)), flush=True)


def torchrun(script: Path, args: list[str], env: dict) -> str:
    """Runs script on 2 processes, showing its output as it comes; returns it."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", str(script), *args]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
    lines = []
    for line in proc.stdout:
        sys.stdout.write(line)
        lines.append(line)
    if proc.wait() != 0:
        raise SystemExit(f"{script.name} failed with exit code {proc.returncode}")
    return "".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="build/demo", type=Path)
    args = parser.parse_args()
    env = dict(
        os.environ,
        OMP_NUM_THREADS="1",
        HF_DEACTIVATE_ASYNC_LOAD="1",
        TOKENIZERS_PARALLELISM="false",
        TORCHINDUCTOR_CACHE_DIR=str(args.out / "inductor-cache"),
    )
    env.setdefault("TRANSFORMERS_VERBOSITY", "error")

    section("1. local artifacts (no model hub here)")
    import build_artifacts  # a sibling: a script's own folder is on sys.path

    artifacts = build_artifacts.main(["--out", str(args.out / "artifacts")])

    section("2. SFT with TRL on 2 NeuronCores (TP 1 x FSDP 2, bf16, compiled)")
    checkpoint = args.out / "sft-qwen3-tiny"
    start = time.perf_counter()
    sft_env = dict(
        env,
        TP_SIZE="1",
        FSDP_SIZE="2",
        TORCH_NEURONX_STRICT="warn",
        TORCH_NEURONX_REPORT=str(args.out / "sft-strict-rank{rank}.json"),
        TORCH_NEURONX_TRACE=str(args.out / "sft-trace-rank{rank}.json"),
        TORCH_NEURONX_TRACE_STEPS="2:3",
    )
    log = torchrun(
        HERE / "sft_neuron_example.py",
        [
            "--model_name_or_path",
            str(artifacts / "qwen3-tiny"),
            "--dataset_name",
            str(artifacts / "qa-chat"),
            "--output_dir",
            str(checkpoint),
            *SFT_FLAGS,
        ],
        sft_env,
    )
    losses = [float(v) for v in re.findall(r"'loss': '?([0-9.]+)", log)]  # the Trainer's logged losses
    print(f"training took {time.perf_counter() - start:.0f} s", end="")
    if losses:
        print(f"; loss {losses[0]:.2f} -> {losses[-1]:.2f} ({losses[-1] / losses[0]:.0%} of the first)")
    else:
        print()
    print(f"checkpoint: {checkpoint} ({', '.join(sorted(p.name for p in checkpoint.glob('*.*')))})")

    section("3. generation from the checkpoint, TP=2, static cache, compiled decode")
    gen_log = torchrun(
        HERE / "demo_generate.py",
        [str(checkpoint), str(args.out / "generate-trace-rank{rank}.json")],
        dict(env, TORCH_NEURONX_STRICT="warn", TORCH_NEURONX_REPORT=str(args.out / "generate-strict-rank{rank}.json")),
    )

    section("4. the announcement's generation script on the checkpoint, TP=2")
    torchrun(HERE / "generate_tp.py", [], dict(env, MODEL_ID=str(checkpoint)))

    section("5. the announcement's Diffusers script: Qwen-Image 2.1, TP=2, compiled blocks")
    png = args.out / "capybara.png"
    start = time.perf_counter()
    torchrun(
        HERE / "diffusers_tp.py",
        [],
        dict(
            env,
            MODEL_ID=str(artifacts / "qwen-image21-tiny"),
            DIFFUSERS_SIZE="256",
            DIFFUSERS_STEPS="8",
            OUT_PNG=str(png),
        ),
    )
    print(f"rendered {png} in {time.perf_counter() - start:.0f} s")

    section("6. what Trainium would do: strict mode, Trainium2 estimates, traces")
    report = [sys.executable, "-m", "torch_neuronx", "report"]
    print("-- the SFT (rank 0):", flush=True)
    subprocess.run(
        [*report, str(args.out / "sft-strict-rank0.json"), "--png", str(args.out / "sft-step.png")], check=True, env=env
    )
    print("\n-- the generation (rank 0):", flush=True)
    subprocess.run([*report, str(args.out / "generate-strict-rank0.json")], check=True, env=env)
    estimated = re.findall(r"estimated on Trainium2.*", gen_log)
    print(f"\ngeneration {estimated[0] if estimated else '(no estimate printed)'}")
    print(
        f"Perfetto traces (open in https://ui.perfetto.dev): {args.out / 'sft-trace-rank0.json'}, "
        f"{args.out / 'generate-trace-rank0.json'}; step chart: {args.out / 'sft-step.png'}"
    )


if __name__ == "__main__":
    main()

"""The main job (`make demo`): Hugging Face code written for Trainium, run
unchanged on 2 emulated NeuronCores.

1. Builds the local artifacts (examples/build_artifacts.py): a tokenizer with
   a chat template, a tiny random-weight Qwen3-style model and a chat dataset
   of short questions and answers.
2. Fine-tunes the model with TRL's SFTTrainer: the source's script
   (examples/sft_neuron_example.py) under `torchrun --nproc_per_node=2` with
   TP_SIZE x FSDP_SIZE = 1 x 2, bf16, wrapped packing and --torch_compile true.
   The source's flags (lr 2e-5, packing to 2048, accumulation 4) show no
   learning on a tiny model in minutes, so they are scaled: lr 3e-3, packing to
   128 tokens, no accumulation, one epoch.
3. Saves the checkpoint (a plain Transformers checkpoint) and generates
   answers from it with TP=2, static cache, chunked prefill and compiled
   decode (examples/demo_generate.py), printing tokens/s, recompilations and
   CPU fallbacks.
4. Runs the source's generation script as written (examples/generate_tp.py,
   128 new tokens, 512-token prefill chunks) on the checkpoint, TP=2.
5. Runs the source's Diffusers script as written (examples/diffusers_tp.py)
   with a tiny Qwen-Image 2.1 pipeline, TP=2 with compiled repeated blocks,
   at 256x256 in 8 steps (the source's 1024x1024 in 40 steps takes minutes
   here), saving the PNG.

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
SFT_FLAGS = ["--dataset_train_split", "train_sft", "--dtype", "bfloat16", "--max_length", "128",
             "--packing", "true", "--packing_strategy", "wrapped", "--learning_rate", "3e-3",
             "--warmup_steps", "0.03", "--num_train_epochs", "3", "--logging_steps", "5",
             "--per_device_train_batch_size", "4", "--gradient_accumulation_steps", "1",
             "--save_only_model", "true", "--torch_compile", "true", "--report_to", "none"]


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
    env = dict(os.environ, OMP_NUM_THREADS="1", HF_DEACTIVATE_ASYNC_LOAD="1", TOKENIZERS_PARALLELISM="false",
               TORCHINDUCTOR_CACHE_DIR=str(args.out / "inductor-cache"))
    env.setdefault("TRANSFORMERS_VERBOSITY", "error")

    section("1. local artifacts (no model hub here)")
    import build_artifacts  # a sibling: a script's own folder is on sys.path

    artifacts = build_artifacts.main(["--out", str(args.out / "artifacts")])

    section("2. SFT with TRL on 2 NeuronCores (TP 1 x FSDP 2, bf16, compiled)")
    checkpoint = args.out / "sft-qwen3-tiny"
    start = time.perf_counter()
    log = torchrun(HERE / "sft_neuron_example.py",
             ["--model_name_or_path", str(artifacts / "qwen3-tiny"), "--dataset_name", str(artifacts / "qa-chat"),
              "--output_dir", str(checkpoint), *SFT_FLAGS], dict(env, TP_SIZE="1", FSDP_SIZE="2"))
    losses = [float(v) for v in re.findall(r"'loss': '?([0-9.]+)", log)]  # the Trainer's logged losses
    print(f"training took {time.perf_counter() - start:.0f} s", end="")
    if losses:
        print(f"; loss {losses[0]:.2f} -> {losses[-1]:.2f} ({losses[-1] / losses[0]:.0%} of the first)")
    else:
        print()
    print(f"checkpoint: {checkpoint} ({', '.join(sorted(p.name for p in checkpoint.glob('*.*')))})")

    section("3. generation from the checkpoint, TP=2, static cache, compiled decode")
    torchrun(HERE / "demo_generate.py", [str(checkpoint)], env)

    section("4. the source's generation script on the checkpoint, TP=2")
    torchrun(HERE / "generate_tp.py", [], dict(env, MODEL_ID=str(checkpoint)))

    section("5. the source's Diffusers script: Qwen-Image 2.1, TP=2, compiled blocks")
    png = args.out / "capybara.png"
    start = time.perf_counter()
    torchrun(HERE / "diffusers_tp.py", [], dict(env, MODEL_ID=str(artifacts / "qwen-image21-tiny"),
                                                DIFFUSERS_SIZE="256", DIFFUSERS_STEPS="8", OUT_PNG=str(png)))
    print(f"rendered {png} in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()

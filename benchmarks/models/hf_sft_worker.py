"""TRL SFTTrainer steps/s with the demo's training settings (examples/demo.py:
bf16 weights, wrapped packing to 128 tokens, batch 4 per process, lr 3e-3),
on one device or, under torchrun, FSDP over every process through
`DistributedConfig(fsdp_size=...)` as examples/sft_neuron_example.py does.
Prints one `RESULT {json}` line.

  python benchmarks/models/hf_sft_worker.py MODEL DATASET OUT --device neuron|cpu [--compiled]
  torchrun --nproc_per_node=2 benchmarks/models/hf_sft_worker.py MODEL DATASET OUT [--compiled]

The first WARMUP steps (compilation, allocator warm-up) are not timed.
"""

import argparse
import json
import os
import time

import _shared  # noqa: F401  (benchmarks/ on sys.path: the shared helpers)
import torch
from transformers import TrainerCallback

import torch_neuronx  # noqa: F401

WARMUP = 3


class StepTimes(TrainerCallback):
    def __init__(self):
        self.ends = []

    def on_step_end(self, args, state, control, **kwargs):
        self.ends.append(time.perf_counter())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("dataset")
    parser.add_argument("out")
    parser.add_argument("--device", default="neuron")
    parser.add_argument("--compiled", action="store_true")
    parser.add_argument("--steps", type=int, default=15)
    args = parser.parse_args()
    from datasets import load_dataset
    from transformers.distributed import DistributedConfig
    from trl import SFTConfig, SFTTrainer

    torch._dynamo.config.automatic_dynamic_shapes = False
    world = int(os.environ.get("WORLD_SIZE", "1"))
    init_kwargs = {"dtype": "bfloat16", "device_map": None}
    if world > 1:
        init_kwargs["distributed_config"] = DistributedConfig(tp_size=1, fsdp_size=world)
    config = SFTConfig(
        output_dir=args.out,
        max_length=128,
        packing=True,
        packing_strategy="wrapped",
        learning_rate=3e-3,
        per_device_train_batch_size=4,
        max_steps=args.steps,
        logging_steps=1000,
        save_strategy="no",
        report_to="none",
        disable_tqdm=True,
        torch_compile=args.compiled,
        use_cpu=args.device == "cpu",
        model_init_kwargs=init_kwargs,
    )
    data = load_dataset(args.dataset, split="train_sft").select_columns(["messages"])
    timer = StepTimes()
    trainer = SFTTrainer(model=args.model, args=config, train_dataset=data, callbacks=[timer])
    device = next(trainer.model.parameters()).device.type
    assert device == args.device, f"the model trained on {device}, not {args.device}"
    trainer.train()
    timed = timer.ends[WARMUP - 1 :]
    steps_per_s = (len(timed) - 1) / (timed[-1] - timed[0])
    if int(os.environ.get("RANK", "0")) == 0:
        tokens_per_step = config.per_device_train_batch_size * config.max_length * world
        print(
            "RESULT "
            + json.dumps(
                {"steps_per_s": steps_per_s, "tokens_per_s": steps_per_s * tokens_per_step, "processes": world}
            )
        )


if __name__ == "__main__":
    main()

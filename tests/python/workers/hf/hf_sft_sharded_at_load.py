"""TRL's SFTTrainer with TP 2 x FSDP 2 (test_hf_scripts.py): the model is
sharded as it loads (no rank ever holds all of it) and not wrapped again.
argv: the output directory, the artifacts directory (examples/build_artifacts.py)."""

import sys
from pathlib import Path

import torch
import torch.distributed as dist
from datasets import load_dataset
from torch.distributed.fsdp import FSDPModule
from torch.distributed.tensor import DTensor, Shard
from transformers.distributed import DistributedConfig
from trl import SFTConfig, SFTTrainer

import torch_neuronx  # noqa: F401

out, artifacts = sys.argv[1], Path(sys.argv[2])
config = SFTConfig(
    output_dir=out,
    max_length=64,
    packing=True,
    packing_strategy="wrapped",
    learning_rate=3e-3,
    per_device_train_batch_size=2,
    max_steps=3,
    logging_steps=1,
    save_strategy="no",
    report_to="none",
    disable_tqdm=True,
    model_init_kwargs={
        "dtype": "bfloat16",
        "device_map": None,
        "distributed_config": DistributedConfig(tp_size=2, fsdp_size=2),
    },
)
data = load_dataset(str(artifacts / "qa-chat"), split="train_sft").select_columns(["messages"])
trainer = SFTTrainer(model=str(artifacts / "qwen3-tiny"), args=config, train_dataset=data)
model = trainer.model
loaded_peak = torch.neuron.max_memory_allocated()
full_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
q = model.model.layers[0].self_attn.q_proj.weight
assert isinstance(q, DTensor) and q.device_mesh.mesh_dim_names == ("fsdp", "tp"), q.device_mesh
assert q.placements[1] == Shard(0) and q.to_local().shape == (32, 128), (q.placements, q.to_local().shape)
# Sharded as it loads: no rank ever held the whole model.
assert loaded_peak < full_bytes / 2, (loaded_peak, full_bytes)
fsdp_units = sum(isinstance(m, FSDPModule) for m in model.modules())
assert fsdp_units > 0
trainer.train()
assert not trainer.is_fsdp_enabled and trainer.model_wrapped is trainer.model
assert sum(isinstance(m, FSDPModule) for m in trainer.model.modules()) == fsdp_units
assert str(trainer.accelerator.distributed_type) == "DistributedType.MULTI_NEURON"
losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
assert len(losses) == 3 and losses[-1] < losses[0], losses
dist.barrier()
print("ok")

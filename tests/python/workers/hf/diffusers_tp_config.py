"""TensorParallelConfig shards the Qwen-Image 2.1 transformer as it loads, on
this rank's device (test_hf_diffusers.py). argv[1]: the pipeline directory."""

import sys

import torch
from diffusers import QwenImage21Transformer2DModel, TensorParallelConfig
from helpers.rank import RANK, WORLD, init
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import DTensor, Replicate, Shard  # noqa: F401

import torch_neuronx  # noqa: F401

model = sys.argv[1]
init()
mesh = DeviceMesh("neuron", list(range(WORLD)))
t = QwenImage21Transformer2DModel.from_pretrained(
    model, subfolder="transformer", torch_dtype=torch.bfloat16, parallel_config=TensorParallelConfig(mesh=mesh)
)
attn = t.transformer_blocks[0].attn
q, out = attn.to_q.weight, attn.to_out[0].weight
assert isinstance(q, DTensor) and q.placements == (Shard(0),), q
assert isinstance(out, DTensor) and out.placements == (Shard(1),), out
assert q.to_local().shape == (32, 64) and out.to_local().shape == (64, 32), (q.to_local().shape, out.to_local().shape)
assert q.to_local().device == torch.device("neuron", RANK), q.to_local().device
assert all(p.device.type == "neuron" for p in t.parameters())
print("ok")

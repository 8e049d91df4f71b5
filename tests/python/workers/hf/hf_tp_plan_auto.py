"""tp_plan="auto" shards over the launched processes; greedy tokens printed for
the test to compare with one process's (test_hf_libraries.py). Transformers
initializes the process group itself (backend "neuron") from the launcher's
environment. argv: the model directory, the prompt ids as JSON."""

import json
import sys

import torch
import torch.distributed as dist
from helpers.rank import RANK
from torch.distributed.tensor import DTensor, Shard
from transformers import AutoModelForCausalLM

import torch_neuronx  # noqa: F401

model_dir, ids = sys.argv[1], json.loads(sys.argv[2])
model = AutoModelForCausalLM.from_pretrained(model_dir, tp_plan="auto", dtype=torch.bfloat16)
assert dist.get_backend() == "neuron" and model.device == torch.device("neuron", RANK), model.device
q = model.model.layers[0].self_attn.q_proj.weight
assert isinstance(q, DTensor) and q.placements == (Shard(0),) and q.to_local().shape == (64, 128), q
out = model.generate(torch.tensor(ids, device=model.device), max_new_tokens=8, do_sample=False)
print("TOKENS", out.tolist())

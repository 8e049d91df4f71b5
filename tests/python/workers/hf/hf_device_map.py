"""from_pretrained with a device_map places a bf16 model on neuron
(test_hf_libraries.py). argv: the model directory, the device_map, the
max_memory as a Python literal (None or a dict)."""

import ast
import sys

import torch
from transformers import AutoModelForCausalLM

model_dir, device_map, max_memory = sys.argv[1], sys.argv[2], ast.literal_eval(sys.argv[3])
model = AutoModelForCausalLM.from_pretrained(
    model_dir, device_map=device_map, max_memory=max_memory, dtype=torch.bfloat16
)
devices = {p.device.type for p in model.parameters()}
assert devices == {"neuron"}, devices
assert all(p.dtype == torch.bfloat16 for p in model.parameters())
ids = torch.tensor([[5, 6, 7]], device="neuron")
print("placed", model(ids).logits.device)

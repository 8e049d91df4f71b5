# Diffusers with tensor parallelism: the announcement's third script, unchanged but for
# the model, the sizes and the process count. Run on 2 emulated NeuronCores:
#   torchrun --nproc_per_node=2 examples/diffusers_tp.py
# - the model is a local tiny Qwen-Image 2.1 pipeline (examples/build_artifacts.py;
#   override with MODEL_ID); <Pipeline>/<Transformer2DModel> are Qwen-Image 2.1's;
# - the mesh spans the launched processes, not a fixed 8;
# - height/width, steps and the PNG's path come from DIFFUSERS_SIZE,
#   DIFFUSERS_STEPS and OUT_PNG (defaults: the announcement's 1024, 40, out.png).
# tests/python/hf/test_source_scripts.py diffs this file against the announcement's text.
import os

import torch, torch.distributed as dist, torch_neuronx
from torch.distributed.device_mesh import DeviceMesh
from diffusers import QwenImage21Pipeline, QwenImage21Transformer2DModel, TensorParallelConfig

model = os.environ.get("MODEL_ID", "build/artifacts/qwen-image21-tiny")
size = int(os.environ.get("DIFFUSERS_SIZE", "1024")); steps = int(os.environ.get("DIFFUSERS_STEPS", "40"))
dist.init_process_group(backend="neuron")
dev = torch.neuron.current_device()
mesh = DeviceMesh("neuron", list(range(dist.get_world_size())))
transformer = QwenImage21Transformer2DModel.from_pretrained(model, subfolder="transformer",
    torch_dtype=torch.bfloat16, parallel_config=TensorParallelConfig(mesh=mesh))
pipe = QwenImage21Pipeline.from_pretrained(model, transformer=transformer, torch_dtype=torch.bfloat16)
pipe.vae.to(dev)
pipe.transformer.compile_repeated_blocks(backend="neuron", fullgraph=True, dynamic=False)
emb, mask, _ = pipe.encode_prompt(prompt="A capybara wearing a wizard hat", device="cpu")
image = pipe(prompt_embeds=emb.to(dev), prompt_embeds_mask=mask.to(dev) if mask is not None else None,
             height=size, width=size, num_inference_steps=steps,
             generator=torch.Generator("cpu").manual_seed(0)).images[0]
if dist.get_rank() == 0:
    image.save(os.environ.get("OUT_PNG", "out.png"))

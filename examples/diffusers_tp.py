# Diffusers with tensor parallelism: the source's third script. Run on 2
# emulated NeuronCores:
#   torchrun --nproc_per_node=2 examples/diffusers_tp.py
# What differs from the source, each the least that lets it run here
# (docs/hf-compat.md says why):
# - the model is a local tiny Qwen-Image pipeline (examples/build_artifacts.py;
#   override with MODEL_ID) and <Pipeline>/<Transformer2DModel> are Qwen-Image's;
# - Qwen-Image's `encode_prompt` returns (embeds, mask), so `emb, mask` unpacks two
#   values, not three;
# - the mesh spans the launched processes, not a fixed 8;
# - height/width, steps and the PNG's path come from DIFFUSERS_SIZE,
#   DIFFUSERS_STEPS and OUT_PNG (defaults: the source's 1024, 40, out.png).
import os

import torch, torch.distributed as dist, torch_neuronx
from torch.distributed.device_mesh import DeviceMesh
from diffusers import QwenImagePipeline, QwenImageTransformer2DModel, TensorParallelConfig

model = os.environ.get("MODEL_ID", "build/artifacts/qwen-image-tiny")
size = int(os.environ.get("DIFFUSERS_SIZE", "1024")); steps = int(os.environ.get("DIFFUSERS_STEPS", "40"))
dist.init_process_group(backend="neuron")
dev = torch.neuron.current_device()
mesh = DeviceMesh("neuron", list(range(dist.get_world_size())))
transformer = QwenImageTransformer2DModel.from_pretrained(model, subfolder="transformer",
    torch_dtype=torch.bfloat16, parallel_config=TensorParallelConfig(mesh=mesh))
pipe = QwenImagePipeline.from_pretrained(model, transformer=transformer, torch_dtype=torch.bfloat16)
pipe.vae.to(dev)
pipe.transformer.compile_repeated_blocks(backend="neuron", fullgraph=True, dynamic=False)
emb, mask = pipe.encode_prompt(prompt="A capybara wearing a wizard hat", device="cpu")
image = pipe(prompt_embeds=emb.to(dev), prompt_embeds_mask=mask.to(dev) if mask is not None else None,
             height=size, width=size, num_inference_steps=steps,
             generator=torch.Generator("cpu").manual_seed(0)).images[0]
if dist.get_rank() == 0:
    image.save(os.environ.get("OUT_PNG", "out.png"))

# FLUX.1 with tensor parallelism, in the shape of the announcement's Diffusers script:
# FLUX's `encode_prompt` returns (prompt_embeds, pooled_prompt_embeds, text_ids),
# not a mask, so the pooled embeddings go to the pipeline instead. Run on 2
# emulated NeuronCores:
#   torchrun --nproc_per_node=2 examples/flux_tp.py
# The model is a local tiny FLUX.1 pipeline (examples/build_artifacts.py;
# override with MODEL_ID); height/width, steps and the PNG's path come from
# DIFFUSERS_SIZE, DIFFUSERS_STEPS and OUT_PNG (defaults: 1024, 4, out.png).
import os

import torch, torch.distributed as dist, torch_neuronx
from torch.distributed.device_mesh import DeviceMesh
from diffusers import FluxPipeline, FluxTransformer2DModel, TensorParallelConfig

model = os.environ.get("MODEL_ID", "build/artifacts/flux-tiny")
size = int(os.environ.get("DIFFUSERS_SIZE", "1024")); steps = int(os.environ.get("DIFFUSERS_STEPS", "4"))
dist.init_process_group(backend="neuron")
dev = torch.neuron.current_device()
mesh = DeviceMesh("neuron", list(range(dist.get_world_size())))
transformer = FluxTransformer2DModel.from_pretrained(model, subfolder="transformer",
    torch_dtype=torch.bfloat16, parallel_config=TensorParallelConfig(mesh=mesh))
pipe = FluxPipeline.from_pretrained(model, transformer=transformer, torch_dtype=torch.bfloat16)
pipe.vae.to(dev)
pipe.transformer.compile_repeated_blocks(backend="neuron", fullgraph=True, dynamic=False)
emb, pooled, _ = pipe.encode_prompt(prompt="A capybara wearing a wizard hat", prompt_2=None, device="cpu")
image = pipe(prompt_embeds=emb.to(dev), pooled_prompt_embeds=pooled.to(dev),
             height=size, width=size, num_inference_steps=steps,
             generator=torch.Generator("cpu").manual_seed(0)).images[0]
if dist.get_rank() == 0:
    image.save(os.environ.get("OUT_PNG", "out.png"))

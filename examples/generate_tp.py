# Text generation with tensor parallelism: the announcement's first script, unchanged
# except for the model id (a local model built by examples/build_artifacts.py;
# override with MODEL_ID). Run on 2 emulated NeuronCores:
#   torchrun --nproc_per_node=2 examples/generate_tp.py
import os

import torch, torch.distributed as dist
import torch_neuronx  # noqa: F401
from torch.distributed import DeviceMesh
from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig
from transformers.distributed import DistributedConfig
from transformers.generation.configuration_utils import CompileConfig

MODEL_ID = os.environ.get("MODEL_ID", "build/artifacts/qwen3-tiny"); MAX_SEQ_LEN = 1024; PREFILL_CHUNK_SIZE = 512
dist.init_process_group(backend="neuron")
world_size = dist.get_world_size()
model = AutoModelForCausalLM.from_pretrained(
    MODEL_ID, dtype=torch.bfloat16,
    distributed_config=DistributedConfig(tp_size=world_size),
    device_mesh=DeviceMesh("neuron", list(range(world_size))),
).eval()
tokenizer = AutoTokenizer.from_pretrained(MODEL_ID)
if tokenizer.pad_token is None:
    tokenizer.pad_token = tokenizer.eos_token
tokenizer.padding_side = "left"
inputs = tokenizer.apply_chat_template(
    [{"role": "user", "content": "The future of AI is"}],
    add_generation_prompt=True, padding=True,
    tokenizer_kwargs={"pad_to_multiple_of": PREFILL_CHUNK_SIZE}, return_tensors="pt")
generation_config = GenerationConfig(
    max_new_tokens=128, do_sample=False, use_cache=True,
    pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
    cache_implementation="static", max_cache_len=MAX_SEQ_LEN,
    prefill_chunk_size=PREFILL_CHUNK_SIZE,
    compile_config=CompileConfig(backend="neuron", fullgraph=False, dynamic=False))
with torch.no_grad():
    output_ids = model.generate(inputs["input_ids"], attention_mask=inputs["attention_mask"],
                                generation_config=generation_config)
if dist.get_rank() == 0:
    print(tokenizer.decode(output_ids[0, inputs["input_ids"].shape[1]:], skip_special_tokens=True))

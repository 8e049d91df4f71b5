# The demo's generation step: the calls of examples/generate_tp.py (TP over
# every process, bf16, static cache, chunked prefill, decode compiled with the
# neuron backend) on a batch of questions, reporting what a Trainium user
# wants to know: answers, tokens/s, recompilations and CPU fallbacks.
#   torchrun --nproc_per_node=2 examples/demo_generate.py MODEL_DIR [TRACE_PATH]
# With TRACE_PATH, one more generate runs under torch.profiler: its trace and
# the tokens/s of its estimated-Trainium2 track.
# benchmarks/models/hf_generate_worker.py imports the loader, the inputs and the
# generation config from here, so the benchmark times this very workload.
import sys
import time

import torch
import torch.distributed as dist
from torch.distributed import DeviceMesh
from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig
from transformers.distributed import DistributedConfig
from transformers.generation.configuration_utils import CompileConfig

import torch_neuronx

MAX_SEQ_LEN = 256
PREFILL_CHUNK_SIZE = 64
NEW_TOKENS = 16
QUESTIONS = ["What is 2 plus 3?", "What is 4 plus 4?", "Spell the number 7.", "What is 9 plus 1?"]


def make_inputs(tokenizer):
    tokenizer.padding_side = "left"
    return tokenizer.apply_chat_template(
        [[{"role": "user", "content": q}] for q in QUESTIONS],
        add_generation_prompt=True,
        padding=True,
        tokenizer_kwargs={"pad_to_multiple_of": PREFILL_CHUNK_SIZE},
        return_tensors="pt",
        return_dict=True,
    )


def make_generation_config(tokenizer) -> GenerationConfig:
    return GenerationConfig(
        max_new_tokens=NEW_TOKENS,
        do_sample=False,
        use_cache=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        cache_implementation="static",
        max_cache_len=MAX_SEQ_LEN,
        prefill_chunk_size=PREFILL_CHUNK_SIZE,
        compile_config=CompileConfig(backend="neuron", fullgraph=False, dynamic=False),
    )


def load_tp_model(model_id: str):
    """Starts the `neuron` process group; the model in bf16 with TP over every process."""
    dist.init_process_group(backend="neuron")
    world_size = dist.get_world_size()
    return AutoModelForCausalLM.from_pretrained(
        model_id,
        dtype=torch.bfloat16,
        distributed_config=DistributedConfig(tp_size=world_size),
        device_mesh=DeviceMesh("neuron", list(range(world_size))),
    ).eval()


def main(model_id: str, trace_path: str | None = None) -> None:
    model = load_tp_model(model_id)
    world_size = dist.get_world_size()
    tokenizer = AutoTokenizer.from_pretrained(model_id)
    inputs = make_inputs(tokenizer)
    generation_config = make_generation_config(tokenizer)

    def generate():
        with torch.no_grad():
            return model.generate(
                inputs["input_ids"], attention_mask=inputs["attention_mask"], generation_config=generation_config
            )

    torch_neuronx.reset_dynamo_metrics()
    start = time.perf_counter()
    generate()  # compiles the decode graph
    first = time.perf_counter() - start
    compiled_graphs = torch_neuronx.get_dynamo_metrics()["graphs_compiled"]
    torch_neuronx.reset_dynamo_metrics()
    torch_neuronx.clear_op_tracking()
    start = time.perf_counter()
    output_ids = generate()
    seconds = time.perf_counter() - start
    metrics = torch_neuronx.get_dynamo_metrics()
    if dist.get_rank() == 0:
        prompt_len = inputs["input_ids"].shape[1]
        for question, ids in zip(QUESTIONS, output_ids):
            answer = tokenizer.decode(ids[prompt_len:], skip_special_tokens=True).strip()
            print(f"  Q: {question:24} A: {answer}")
        new_tokens = (output_ids.shape[1] - prompt_len) * len(QUESTIONS)
        print(
            f"  TP={world_size}, bf16, static cache, compiled decode: {new_tokens / seconds:.0f} tokens/s "
            f"({len(QUESTIONS)} prompts x {output_ids.shape[1] - prompt_len} tokens in {seconds:.2f} s; "
            f"the first generate, which compiled {compiled_graphs} graph(s), took {first:.1f} s)"
        )
        print(
            f"  recompilations in the timed generate: {metrics['recompilations']}, "
            f"CPU fallbacks: {sum(torch_neuronx.get_fallback_ops().values())} {torch_neuronx.get_fallback_ops() or ''}"
        )
    if trace_path:
        estimate_on_trainium(
            generate, trace_path, new_tokens=(output_ids.shape[1] - inputs["input_ids"].shape[1]) * len(QUESTIONS)
        )
    dist.destroy_process_group()


def estimate_on_trainium(generate, trace_path: str, new_tokens: int) -> None:
    """One more generate under torch.profiler: its trace (Perfetto) and the
    tokens/s its estimated-Trainium2 track gives (device time only: the host
    is assumed never to hold the device up)."""
    from torch.profiler import ProfilerActivity, profile

    from torch_neuronx.observability import trace_report

    path = trace_path.replace("{rank}", str(dist.get_rank()))
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        generate()
    prof.export_chrome_trace(path)
    _, estimated = trace_report.per_family(trace_report.load(path))
    est_s = sum(sum(v.values()) for v in estimated.values()) / 1e6
    if dist.get_rank() == 0:
        print(
            f"  estimated on Trainium2 (TP={dist.get_world_size()} NeuronCores): {new_tokens / est_s:.0f} tokens/s "
            f"({est_s * 1e3:.2f} ms of device time for {new_tokens} tokens); trace: {path}"
        )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)  # [trace path, "{rank}" per process]

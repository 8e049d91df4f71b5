"""One configuration of the demo's generation (examples/demo_generate.py's
prompts and GenerationConfig), timed; prints one `RESULT {json}` line.

  torchrun --nproc_per_node=2 benchmarks/models/hf_generate_worker.py MODEL --tp --compiled   # TP over the processes
  python benchmarks/models/hf_generate_worker.py MODEL --device neuron|cpu [--compiled]        # one device

--compiled compiles decode as the demo does (CompileConfig backend "neuron";
Inductor's own backend for the CPU); without it, generation is eager.

Every configuration generates exactly NEW_TOKENS tokens per prompt
(min_new_tokens), so the work is the same whatever the random model samples.
The first generate warms up (and compiles); the median of the next ones counts.
"""

import argparse
import json
import statistics
import time

import _shared  # noqa: F401  (benchmarks/ on sys.path: the shared helpers)
import torch

import torch_neuronx
from examples.demo_generate import NEW_TOKENS, QUESTIONS, load_tp_model, make_generation_config, make_inputs


def load(model_id: str, tp: bool, device: str):
    from transformers import AutoModelForCausalLM

    if tp:
        return load_tp_model(model_id)
    return AutoModelForCausalLM.from_pretrained(model_id, dtype=torch.bfloat16).to(device).eval()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--tp", action="store_true", help="TP over the torchrun processes")
    parser.add_argument("--compiled", action="store_true", help="decode compiled, as in the demo")
    parser.add_argument("--device", default="neuron")
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    from transformers import AutoTokenizer

    model = load(args.model, args.tp, args.device)
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    inputs = make_inputs(tokenizer)
    config = make_generation_config(tokenizer)
    config.min_new_tokens = NEW_TOKENS
    config.disable_compile = not args.compiled
    if args.device == "cpu":
        config.compile_config.backend = "inductor"
    ids, mask = inputs["input_ids"].to(args.device), inputs["attention_mask"].to(args.device)

    def generate():
        with torch.no_grad():
            return model.generate(ids, attention_mask=mask, generation_config=config)

    generate()
    torch_neuronx.reset_dynamo_metrics()
    seconds = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        out = generate()
        seconds.append(time.perf_counter() - start)
    new_tokens = (out.shape[1] - ids.shape[1]) * len(QUESTIONS)
    assert new_tokens == NEW_TOKENS * len(QUESTIONS), out.shape
    rank0 = not args.tp or torch.distributed.get_rank() == 0
    if rank0:
        print(
            "RESULT "
            + json.dumps(
                {
                    "tokens_per_s": new_tokens / statistics.median(seconds),
                    "recompilations": torch_neuronx.get_dynamo_metrics()["recompilations"],
                }
            )
        )
    if args.tp:
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()

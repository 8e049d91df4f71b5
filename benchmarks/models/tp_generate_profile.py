"""Where a TP rank's time goes in the demo's generation (eager): torch.profiler
over one generate on rank 0, top ops by self CPU time. Runs under torchrun with
one thread per rank; the model is build/artifacts/qwen3-h<HIDDEN>
(benchmarks/models/hf_workloads.py --wide-only HIDDEN builds it).

Run: OMP_NUM_THREADS=1 .venv/bin/torchrun --standalone --nproc_per_node 2 \\
       benchmarks/models/tp_generate_profile.py [HIDDEN]
"""

import sys
import time

import _shared  # noqa: F401  (benchmarks/ on sys.path: the shared helpers)
import torch
from _figures import Table, command, report
from _shared import ROOT

import torch_neuronx  # noqa: F401
from examples.demo_generate import NEW_TOKENS, load_tp_model, make_generation_config, make_inputs


def main() -> None:
    from transformers import AutoTokenizer

    model_dir = ROOT / "build" / "artifacts" / f"qwen3-h{sys.argv[1] if len(sys.argv) > 1 else 1024}"
    model, tokenizer = load_tp_model(str(model_dir)), AutoTokenizer.from_pretrained(model_dir)
    inputs, config = make_inputs(tokenizer), make_generation_config(tokenizer)
    config.min_new_tokens, config.disable_compile = NEW_TOKENS, True
    ids, mask = inputs["input_ids"].to("neuron"), inputs["attention_mask"].to("neuron")
    with torch.no_grad():
        for _ in range(2):
            model.generate(ids, attention_mask=mask, generation_config=config)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            start = time.perf_counter()
            model.generate(ids, attention_mask=mask, generation_config=config)
            seconds = time.perf_counter() - start
    if torch.distributed.get_rank() == 0:
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=18))
        hidden = model_dir.name.removeprefix("qwen3-h")
        world = torch.distributed.get_world_size()
        table = Table(
            f"one eager generate, TP={world}, qwen3 at hidden {hidden} (under torch.profiler, rank 0)",
            ["measure", "s"],
            note=f"The demo's generation ({NEW_TOKENS} new tokens per prompt) after two warm-up calls; the profiler's "
            "table of top ops by self CPU time is printed, not kept.",
        )
        table.add("one generate", seconds)
        torchrun = ["-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={world}"]
        report("tp_generate_profile", [table], command_line=command(launcher=torchrun))
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()

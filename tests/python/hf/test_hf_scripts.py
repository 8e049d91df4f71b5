"""The announcement's Hugging Face scripts (examples/), run unchanged under torchrun
on emulated NeuronCores with the local artifacts of
examples/build_artifacts.py: TP generation gives the one-process tokens and
compiles decode once; TRL's SFTTrainer trains with TP x FSDP (2 x 1, 1 x 2
and, on 4 processes, 2 x 2) and saves a plain Transformers checkpoint that
gives the same logits on the CPU as on neuron; the model it trains is sharded
as it loads and not wrapped again."""

import re

import pytest
import torch
from helpers.dist_launch import assert_all_ok, launch, torchrun

from examples import build_artifacts


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory):
    return build_artifacts.main(["--out", str(tmp_path_factory.mktemp("artifacts"))])


def test_generate_tp_script_gives_the_one_process_tokens(artifacts, tmp_path):
    model = tmp_path / "qwen3-clear-margins"
    from transformers import AutoTokenizer

    build_artifacts.build_model(
        "qwen3", AutoTokenizer.from_pretrained(artifacts / "tokenizer"), model, initializer_range=0.5
    )
    texts = [torchrun(n, "generate_tp.py", [], tmp_path, MODEL_ID=str(model)) for n in (2, 1)]
    assert texts[0].strip(), "rank 0 printed no text"
    assert texts[0] == texts[1]


def test_demo_generation_compiles_decode_once_without_cpu_fallbacks(artifacts, tmp_path):
    out = torchrun(2, "demo_generate.py", [str(artifacts / "qwen3-tiny"), str(tmp_path / "gen-{rank}.json")], tmp_path)
    assert "recompilations in the timed generate: 0," in out and "CPU fallbacks: 0" in out, out
    assert out.count("Q: ") == 4 and "tokens/s" in out, out
    # the profiled generate: its trace and the tokens/s of its estimated track
    assert re.search(r"estimated on Trainium2 \(TP=2 NeuronCores\): \d+ tokens/s", out), out
    from helpers.chrome_trace import Trace

    trace = Trace(tmp_path / "gen-0.json")
    assert {"compiled graph", "collective"} <= {e["args"].get("kind") for e in trace.estimated(trace.device_pid(0))}


# The announcement's flags, scaled as the demo scales them; the Trainer's default
# save behaviour (save_strategy "steps", a checkpoint at the end of training).
SFT_FLAGS = [
    "--dataset_train_split",
    "train_sft",
    "--dtype",
    "bfloat16",
    "--max_length",
    "64",
    "--packing",
    "true",
    "--packing_strategy",
    "wrapped",
    "--learning_rate",
    "3e-3",
    "--max_steps",
    "4",
    "--logging_steps",
    "1",
    "--per_device_train_batch_size",
    "2",
    "--save_only_model",
    "true",
    "--report_to",
    "none",
    "--disable_tqdm",
    "true",
]


def assert_plain_checkpoint(path, original):
    """A plain Transformers checkpoint: loads on the CPU, holds trained weights,
    and gives the same logits on the CPU as on neuron."""
    from transformers import AutoModelForCausalLM

    trained = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    assert all(p.device.type == "cpu" for p in trained.parameters())
    changed = [n for (n, p), q in zip(trained.named_parameters(), original.parameters()) if not torch.equal(p, q)]
    assert changed, f"{path} holds the untrained weights"
    ids = torch.randint(1, 300, (2, 16), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        cpu_logits = trained(ids).logits
        neuron_logits = trained.to("neuron")(ids.to("neuron")).logits
    assert torch.equal(neuron_logits.cpu(), cpu_logits)  # the same CPU kernels, bitwise
    return cpu_logits


def assert_trace_of_steps(path):
    """A trace of training steps: the device's stream and estimated-Trainium2
    tracks, compiled graphs, the TP collectives, both estimated."""
    from helpers.chrome_trace import Trace

    trace = Trace(path)
    pid = trace.device_pid(0)
    kinds = {e["args"].get("kind") for e in trace.measured(pid)}
    assert {"op", "copy", "collective", "compiled graph"} <= kinds, kinds
    estimated = {e["args"].get("kind") for e in trace.estimated(pid)}
    assert {"collective", "compiled graph"} <= estimated, estimated
    assert sum(1 for e in trace.events if e.get("name", "").startswith("ProfilerStep#")) == 2


@pytest.mark.parametrize(
    "tp,fsdp,compile_,save_steps", [(2, 1, "true", "2"), (1, 2, "false", None), (2, 2, "false", None)]
)
def test_sft_script_trains_with_tp_x_fsdp_and_saves_plain_checkpoints(
    artifacts, tmp_path, tp, fsdp, compile_, save_steps
):
    # With TP the end-of-training save used to fail: a barrier followed at once
    # by another collective could report "ranks disagree" (docs/conformance.md).
    from transformers import AutoModelForCausalLM

    ckpt = tmp_path / "sft"
    extra = ["--save_steps", save_steps] if save_steps else []
    # the compiled run also traces steps 2-3 as `make demo` does (TORCH_NEURONX_TRACE)
    trace = {"TORCH_NEURONX_TRACE": str(tmp_path / "trace-{rank}.json"), "TORCH_NEURONX_TRACE_STEPS": "1:2"}
    log = torchrun(
        tp * fsdp,
        "sft_neuron_example.py",
        [
            "--model_name_or_path",
            str(artifacts / "qwen3-tiny"),
            "--dataset_name",
            str(artifacts / "qa-chat"),
            "--output_dir",
            str(ckpt),
            "--torch_compile",
            compile_,
            *SFT_FLAGS,
            *extra,
        ],
        tmp_path,
        TP_SIZE=str(tp),
        FSDP_SIZE=str(fsdp),
        **(trace if compile_ == "true" else {}),
    )
    assert log.count("'loss'") >= 4, log[-2000:]
    if compile_ == "true":
        assert_trace_of_steps(tmp_path / "trace-0.json")
    original = AutoModelForCausalLM.from_pretrained(artifacts / "qwen3-tiny", dtype=torch.float32)
    steps = ["checkpoint-2", "checkpoint-4"] if save_steps else ["checkpoint-4"]
    assert sorted(p.name for p in ckpt.glob("checkpoint-*")) == steps
    logits = [assert_plain_checkpoint(ckpt / s, original) for s in steps]
    final = assert_plain_checkpoint(ckpt, original)
    assert torch.equal(final, logits[-1])  # save_model wrote the last checkpoint's weights
    if save_steps:
        assert not torch.equal(logits[0], logits[1])  # the mid-training checkpoint is its own


def test_sft_trainer_keeps_the_model_sharded_at_load_and_does_not_wrap_it_again(artifacts, tmp_path):
    # TP 2 x FSDP 2 on 4 processes, as the announcement's training run (scaled).
    results = launch(
        "hf_sft_sharded_at_load", world=4, tmp_path=tmp_path, timeout=400, args=[tmp_path / "out", artifacts]
    )
    assert_all_ok(results)

"""torch.compile(backend="neuron") on tiny Llama-, Qwen3-, Mistral- and
GPT-2-style causal LMs built from configs: compiled equals eager forward and
backward in float32 and forward in bfloat16; Transformers' static-cache
generation with CompileConfig(backend="neuron") gives eager's greedy tokens and
compiles the decode graph once. Inductor's cache is per test, so every
compile here is cold."""

import pytest
import torch
from helpers.tiny_models import TINY_ARCHITECTURES, tiny_causal_lm
from transformers import CompileConfig

import torch_neuronx


@pytest.fixture(autouse=True)
def fresh_compile_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    torch._dynamo.reset()
    torch_neuronx.reset_dynamo_metrics()
    yield
    torch._dynamo.reset()


def token_ids(shape, seed=1):
    return torch.randint(1, 128, shape, generator=torch.Generator().manual_seed(seed)).to("neuron")


@pytest.mark.parametrize("arch", TINY_ARCHITECTURES)
def test_compiled_forward_and_backward_equal_eager_in_float32(arch):
    model = tiny_causal_lm(arch)
    ids = token_ids((2, 12))
    compiled = torch.compile(model, backend="neuron")
    out = compiled(ids, labels=ids)
    out.loss.backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters()}
    model.zero_grad()
    ref = model(ids, labels=ids)
    ref.loss.backward()
    torch.testing.assert_close(out.logits.cpu(), ref.logits.cpu(), rtol=1e-4, atol=1e-4)
    for name, p in model.named_parameters():
        torch.testing.assert_close(grads[name].cpu(), p.grad.cpu(), rtol=1e-3, atol=1e-5, msg=name)
    m = torch_neuronx.get_dynamo_metrics()
    assert m["graphs_compiled"] == 2 and m["kernels_generated"] > 0, m  # forward and backward, generated code
    assert m["graph_breaks"] == 0 and m["eager_fallbacks"] == 0, m


@pytest.mark.parametrize("arch", TINY_ARCHITECTURES)
def test_compiled_forward_equals_eager_in_bfloat16(arch):
    model = tiny_causal_lm(arch, dtype=torch.bfloat16)
    ids = token_ids((2, 12))
    with torch.no_grad():
        out = torch.compile(model, backend="neuron")(ids).logits
        ref = model(ids).logits
    assert out.dtype == torch.bfloat16
    scale = ref.float().abs().max().item()  # bf16 rounding differs between fused and op-by-op code
    torch.testing.assert_close(out.float().cpu(), ref.float().cpu(), rtol=2e-2, atol=2e-2 * scale)


@pytest.mark.parametrize("arch", ["llama", "qwen3"])
def test_static_cache_generation_with_compile_config_equals_eager_and_compiles_decode_once(arch):
    model = tiny_causal_lm(arch, initializer_range=0.5)
    ids = token_ids((1, 6))
    kwargs = dict(max_new_tokens=8, do_sample=False, cache_implementation="static")
    eager = model.generate(ids, disable_compile=True, **kwargs)
    torch_neuronx.reset_dynamo_metrics()
    config = CompileConfig(backend="neuron", fullgraph=False, dynamic=False)
    compiled = model.generate(ids, compile_config=config, **kwargs)
    assert compiled.tolist() == eager.tolist()
    m = torch_neuronx.get_dynamo_metrics()
    assert m["graphs_compiled"] == 1 and m["recompilations"] == 0, m  # one decode graph for all 7 decode steps
    again = model.generate(ids, compile_config=config, **kwargs)  # a second generate reuses it
    assert again.tolist() == eager.tolist()
    assert torch_neuronx.get_dynamo_metrics()["graphs_compiled"] == 1


def test_trainer_torch_compile_selects_the_neuron_backend_and_trains(tmp_path):
    from datasets import Dataset
    from transformers import Trainer, TrainingArguments

    args = TrainingArguments(
        output_dir=str(tmp_path / "out"),
        torch_compile=True,
        max_steps=3,
        per_device_train_batch_size=2,
        learning_rate=1e-2,
        report_to=[],
        save_strategy="no",
        logging_steps=1,
        disable_tqdm=True,
    )
    assert args.torch_compile_backend == "neuron" and args.device.type == "neuron"
    ids = torch.randint(1, 128, (8, 12), generator=torch.Generator().manual_seed(0))
    data = Dataset.from_dict({"input_ids": ids.tolist(), "labels": ids.tolist()})
    model = tiny_causal_lm("llama").train()
    trainer = Trainer(model=model, args=args, train_dataset=data)
    result = trainer.train()
    assert result.global_step == 3 and torch.isfinite(torch.tensor(result.training_loss))
    assert next(model.parameters()).device.type == "neuron"
    m = torch_neuronx.get_dynamo_metrics()
    assert m["graphs_compiled"] >= 2 and m["kernels_generated"] > 0 and m["recompilations"] == 0, m


def test_chunked_prefill_compiles_once_per_padded_length_and_matches_eager():
    # prefill_chunk_size sends each chunk through the compiled forward too.
    # Transformers slices position_ids from the whole prompt, so the chunk's
    # stride is the padded prompt length: a new padded length is a new
    # prefill graph (docs/hugging-face.md); the same length reuses every graph.
    model = tiny_causal_lm("qwen3", initializer_range=0.5)
    config = CompileConfig(backend="neuron", fullgraph=False, dynamic=False)
    kwargs = dict(
        max_new_tokens=6,
        min_new_tokens=6,
        do_sample=False,
        cache_implementation="static",
        max_cache_len=64,
        prefill_chunk_size=8,
    )
    first, second = token_ids((2, 16), seed=1), token_ids((2, 16), seed=2)
    compiled = model.generate(first, compile_config=config, **kwargs)
    eager = model.generate(first, disable_compile=True, **kwargs)
    assert compiled.tolist() == eager.tolist()
    recompilations = torch_neuronx.get_dynamo_metrics()["recompilations"]
    again = model.generate(second, compile_config=config, **kwargs)  # other prompts, same padded length
    assert again.tolist() == model.generate(second, disable_compile=True, **kwargs).tolist()
    m = torch_neuronx.get_dynamo_metrics()
    assert m["recompilations"] == recompilations, m["recompile_reasons"]

"""Transformers models, unchanged, running the project's NKI kernel
repositories through the `kernels` library on neuron: tiny Llama, Qwen3 and
ViT models kernelized in inference, training and torch.compile modes give the
un-kernelized model's outputs within float32 rounding (and the same greedy
tokens), and the kernels demonstrably run (executed-op tracking). Also
Transformers' own path: from_pretrained(use_kernels=True, kernel_config=...)."""

import copy

import pytest
import torch
from helpers import kernel_repos
from helpers.tiny_models import tiny_causal_lm

import torch_neuronx

kernels = pytest.importorskip("kernels")
from kernels import LocalLayerRepository, Mode, kernelize, use_kernel_mapping  # noqa: E402

ATTENTION = f"{kernel_repos.ORG}/attention-nki"  # Transformers' attn_implementation for attention-nki


@pytest.fixture(autouse=True)
def local_kernels(monkeypatch, tmp_path):
    monkeypatch.setenv("LOCAL_KERNELS", kernel_repos.local_kernels())
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))  # compiles here are cold
    torch._dynamo.reset()
    torch_neuronx.reset_dynamo_metrics()
    yield
    torch._dynamo.reset()


def _layer(repo, name):
    return {"neuron": LocalLayerRepository(repo_path=kernel_repos.built()[repo], layer_name=name)}


LM_MAPPING = {"RMSNorm": ("rmsnorm-nki", "RMSNorm"), "SiLU": ("silu-and-mul-nki", "SiLU")}


def _kernelized(model, mode, mapping=LM_MAPPING):
    model = copy.deepcopy(model)
    model.set_attn_implementation(ATTENTION)
    with use_kernel_mapping({k: _layer(*v) for k, v in mapping.items()}):
        kernelize(model, device="neuron", mode=mode)
    return model


def _nki_runs():
    return {k for k in torch_neuronx.get_executed_ops() if k.startswith("nki::")}


def _ids(shape=(2, 12), seed=1):
    return torch.randint(1, 128, shape, generator=torch.Generator().manual_seed(seed)).to("neuron")


def _close(a, b):
    torch.testing.assert_close(a.detach().cpu(), b.detach().cpu(), rtol=1e-5, atol=1e-5)


LM_KERNELS = {"nki::rmsnorm_kernel", "nki::silu_kernel", "nki::attention_kernel"}


@pytest.mark.parametrize("arch", ["llama", "qwen3"])
def test_inference_runs_the_kernels_with_the_same_logits_and_greedy_tokens(arch):
    ref = tiny_causal_lm(arch)
    model = _kernelized(ref, Mode.INFERENCE)
    ids = _ids()
    torch_neuronx.clear_op_tracking()
    _close(model(ids).logits, ref(ids).logits)
    assert _nki_runs() == LM_KERNELS
    gen = dict(max_new_tokens=6, do_sample=False)
    assert torch.equal(model.generate(ids[:1], **gen).cpu(), ref.generate(ids[:1], **gen).cpu())


def test_padded_batches_and_compiled_generation_use_sdpas_masks():
    # A left-padded batch (a padding mask) and generate under torch.compile
    # (which always passes a mask) reach the kernel as an additive bias.
    from transformers import CompileConfig

    ref = tiny_causal_lm("llama")
    model = _kernelized(ref, Mode.INFERENCE)
    ids = _ids((2, 10))
    mask = torch.ones_like(ids)
    mask[1, :4] = 0
    ids[1, :4] = 0  # pad_token_id
    gen = dict(attention_mask=mask, max_new_tokens=5, do_sample=False)
    torch_neuronx.clear_op_tracking()
    out = model.generate(ids, **gen)
    assert "nki::attention_kernel" in _nki_runs()
    assert torch.equal(out.cpu(), ref.generate(ids, **gen).cpu())
    compiled = dict(
        gen,
        cache_implementation="static",
        compile_config=CompileConfig(backend="neuron", fullgraph=False, dynamic=False),
    )
    torch_neuronx.clear_op_tracking()
    assert torch.equal(model.generate(ids, **compiled).cpu(), out.cpu())
    assert torch_neuronx.get_dynamo_metrics()["frames_compiled"] >= 1 and "nki::attention_kernel" in _nki_runs()


def test_training_backpropagates_through_the_kernels():
    ref = tiny_causal_lm("llama").train()
    model = _kernelized(ref, Mode.TRAINING)
    ids = _ids()
    torch_neuronx.clear_op_tracking()
    loss = model(ids, labels=ids).loss
    assert _nki_runs() == LM_KERNELS
    loss.backward()
    ref_loss = ref(ids, labels=ids).loss
    ref_loss.backward()
    _close(loss, ref_loss)
    for (name, p), q in zip(model.named_parameters(), ref.parameters()):
        assert p.grad is not None, name
        torch.testing.assert_close(p.grad.cpu(), q.grad.cpu(), rtol=1e-4, atol=1e-5, msg=name)


def test_torch_compile_keeps_the_kernels_in_one_graph():
    ref = tiny_causal_lm("llama")
    model = _kernelized(ref, Mode.INFERENCE | Mode.TORCH_COMPILE)
    compiled = torch.compile(model, backend="neuron", fullgraph=True)
    ids = _ids()
    torch_neuronx.clear_op_tracking()
    _close(compiled(ids).logits, ref(ids).logits)
    assert _nki_runs() == LM_KERNELS
    metrics = torch_neuronx.get_dynamo_metrics()
    assert metrics["graph_breaks"] == 0 and metrics["frames_compiled"] >= 1


def test_compiled_training_step_through_the_kernels():
    ref = tiny_causal_lm("llama").train()
    model = _kernelized(ref, Mode.TRAINING | Mode.TORCH_COMPILE)
    ids = _ids()
    torch_neuronx.clear_op_tracking()
    loss = torch.compile(model, backend="neuron", fullgraph=True)(ids, labels=ids).loss
    assert _nki_runs() == LM_KERNELS
    loss.backward()
    ref(ids, labels=ids).loss.backward()
    assert torch_neuronx.get_dynamo_metrics()["graph_breaks"] == 0
    for p, q in zip(model.parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad.cpu(), q.grad.cpu(), rtol=1e-4, atol=1e-5)


# ------------------------------------------------------------------------ ViT
def _tiny_vit():
    from transformers import ViTConfig, ViTForImageClassification

    cfg = ViTConfig(
        image_size=32,
        patch_size=8,
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=128,
        num_labels=5,
    )
    torch.manual_seed(0)
    return ViTForImageClassification(cfg).to("neuron").eval()


def _pixels(n=2):
    return torch.randn(n, 3, 32, 32, generator=torch.Generator().manual_seed(2)).to("neuron")


VIT_MAPPING = {"GeLU": ("vit-nki", "GeLU")}


def test_vit_inference_training_and_compile():
    ref = _tiny_vit()
    x = _pixels()
    model = _kernelized(ref, Mode.INFERENCE, VIT_MAPPING)
    torch_neuronx.clear_op_tracking()
    _close(model(x).logits, ref(x).logits)
    assert _nki_runs() == {"nki::gelu_kernel", "nki::attention_kernel"}

    compiled = torch.compile(
        _kernelized(ref, Mode.INFERENCE | Mode.TORCH_COMPILE, VIT_MAPPING), backend="neuron", fullgraph=True
    )
    torch_neuronx.clear_op_tracking()
    _close(compiled(x).logits, ref(x).logits)
    assert _nki_runs() == {"nki::gelu_kernel", "nki::attention_kernel"}
    assert torch_neuronx.get_dynamo_metrics()["graph_breaks"] == 0

    ref.train()
    model = _kernelized(ref, Mode.TRAINING, VIT_MAPPING)
    labels = torch.tensor([1, 3], device="neuron")
    torch_neuronx.clear_op_tracking()
    model(x, labels=labels).loss.backward()
    assert _nki_runs() == {"nki::gelu_kernel", "nki::attention_kernel"}
    ref(x, labels=labels).loss.backward()
    for p, q in zip(model.parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad.cpu(), q.grad.cpu(), rtol=1e-4, atol=1e-5)


# ------------------------------------------------- Transformers' own kernel path
@pytest.fixture
def restore_patches():
    yield
    from transformers.monkey_patching import clear_patch_mapping

    clear_patch_mapping()  # KernelConfig's layouts are registered process-wide


def test_from_pretrained_with_kernel_config_kernelizes_llama_and_vit(tmp_path, restore_patches):
    from transformers import AutoModelForCausalLM, KernelConfig, ViTForImageClassification

    org = kernel_repos.ORG
    ref = tiny_causal_lm("llama")
    ref.save_pretrained(tmp_path / "llama")
    config = KernelConfig(
        {"RMSNorm": {"neuron": f"{org}/rmsnorm-nki:RMSNorm"}, "SiLU": {"neuron": f"{org}/silu-and-mul-nki:SiLU"}}
    )
    model = AutoModelForCausalLM.from_pretrained(
        tmp_path / "llama", device_map="neuron", use_kernels=True, kernel_config=config, attn_implementation=ATTENTION
    ).eval()
    ids = _ids()
    torch_neuronx.clear_op_tracking()
    _close(model(ids).logits, ref(ids).logits)
    assert _nki_runs() == LM_KERNELS

    vit = _tiny_vit()
    vit.save_pretrained(tmp_path / "vit")
    config = KernelConfig(
        {"ViTLayer": f"{org}/vit-nki:ViTLayer", "ViTMLP": f"{org}/vit-nki:ViTMLP", "GeLU": f"{org}/vit-nki:GeLU"}
    )
    model = ViTForImageClassification.from_pretrained(
        tmp_path / "vit", device_map="neuron", use_kernels=True, kernel_config=config, attn_implementation=ATTENTION
    ).eval()
    assert type(model.vit.layers[0]).__name__ == "ViTLayerLayout"
    x = _pixels()
    torch_neuronx.clear_op_tracking()
    _close(model(x).logits, vit(x).logits)
    assert _nki_runs() == {"nki::layer_norm_kernel", "nki::linear_gelu_kernel", "nki::attention_kernel"}


def test_kernel_config_with_local_paths_on_a_loaded_model():
    from transformers import KernelConfig

    repos = kernel_repos.built()
    ref = tiny_causal_lm("llama")
    model = copy.deepcopy(ref)
    model.set_use_kernels(
        True,
        KernelConfig(
            {"RMSNorm": f"{repos['rmsnorm-nki']}:RMSNorm", "SiLU": f"{repos['silu-and-mul-nki']}:SiLU"},
            use_local_kernel=True,
        ),
    )
    ids = _ids()
    torch_neuronx.clear_op_tracking()
    _close(model(ids).logits, ref(ids).logits)
    assert {"nki::rmsnorm_kernel", "nki::silu_kernel"} <= _nki_runs()


@pytest.mark.xfail(
    strict=True,
    raises=AttributeError,
    reason="Transformers 5.23.0 (and 5.25.0): from_pretrained rewrites a KernelConfig's mapping to "
    "(repo, metadata) tuples, which the use_local_kernel=True branch then splits as strings",
)
def test_from_pretrained_with_a_local_kernel_config(tmp_path, restore_patches):
    from transformers import AutoModelForCausalLM, KernelConfig

    tiny_causal_lm("llama").save_pretrained(tmp_path)
    config = KernelConfig(
        {"RMSNorm": {"neuron": f"{kernel_repos.built()['rmsnorm-nki']}:RMSNorm"}}, use_local_kernel=True
    )
    AutoModelForCausalLM.from_pretrained(tmp_path, device_map="neuron", use_kernels=True, kernel_config=config)

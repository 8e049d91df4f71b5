"""The project's NKI kernel repositories (examples/kernel-repos) in
Transformers models, loaded through the `kernels` library: per model, one
bf16 forward with and without the kernels, both from the same model and
weights.

- Estimated Trainium2 time (torch_neuronx.estimation.step): NKI kernels by
  the NKI cost model, every other op by the per-op roofline; both read
  torch_neuronx/trainium.py.
- The emulator's own wall time (median), and the CPU's for the same
  un-kernelized model, side by side.

The un-kernelized baseline uses Transformers' default attention ("sdpa"),
which the roofline counts as one fused op at its bound; the ViT layer is
also shown against eager attention (matmul, softmax, matmul as separate ops).

Run: .venv/bin/python benchmarks/models/kernel_hub.py  (not kernels.py: the script folder comes first on
sys.path, and a kernels.py there would hide the `kernels` library)
"""

import copy
import os

import _shared  # noqa: F401  (benchmarks/ on sys.path: the shared helpers)
import torch
from _figures import Table, report
from _timing import median_seconds

import torch_neuronx  # noqa: F401
from torch_neuronx import kernel_builder
from torch_neuronx.estimation.step import TrainiumEstimate

REPOS = _shared.ROOT / "examples" / "kernel-repos"
ORG = "torch-neuronx"
ATTENTION = f"{ORG}/attention-nki"


def build_repositories():
    names = ("rmsnorm-nki", "silu-and-mul-nki", "attention-nki", "vit-nki")
    for name in names:
        kernel_builder.build(REPOS / name)
    os.environ["LOCAL_KERNELS"] = ":".join(f"{ORG}/{n}={REPOS / n}" for n in names)


def causal_lm(arch):
    import transformers

    cls = {"llama": transformers.LlamaConfig, "qwen3": transformers.Qwen3Config}[arch]
    cfg = cls(
        vocab_size=8192,
        hidden_size=512,
        intermediate_size=1408,
        num_hidden_layers=4,
        num_attention_heads=8,
        num_key_value_heads=4,
        head_dim=64,
        max_position_embeddings=1024,
    )
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(cfg, attn_implementation="sdpa", dtype=torch.bfloat16)
    ids = torch.randint(0, 8192, (1, 256))
    return model.eval(), ids


def kernelize_lm(model):
    from kernels import LayerRepository, Mode, kernelize, use_kernel_mapping

    fused = copy.deepcopy(model)
    fused.set_attn_implementation(ATTENTION)
    mapping = {
        "RMSNorm": {"neuron": LayerRepository(repo_id=f"{ORG}/rmsnorm-nki", layer_name="RMSNorm", version=1)},
        "SiLU": {"neuron": LayerRepository(repo_id=f"{ORG}/silu-and-mul-nki", layer_name="SiLU", version=1)},
    }
    with use_kernel_mapping(mapping):
        kernelize(fused, device="neuron", mode=Mode.INFERENCE)
    return fused


def vit_base_layer(tmp, attn="sdpa"):
    from transformers import KernelConfig, ViTConfig, ViTForImageClassification

    cfg = ViTConfig(
        hidden_size=768,
        num_attention_heads=12,
        intermediate_size=3072,
        num_hidden_layers=1,
        image_size=224,
        patch_size=16,
        num_labels=10,
    )
    torch.manual_seed(0)
    model = ViTForImageClassification(cfg).to(torch.bfloat16).eval()
    model.save_pretrained(tmp)
    base = ViTForImageClassification.from_pretrained(tmp, dtype=torch.bfloat16, attn_implementation=attn).eval()
    config = KernelConfig(
        {"ViTLayer": f"{ORG}/vit-nki:ViTLayer", "ViTMLP": f"{ORG}/vit-nki:ViTMLP", "GeLU": f"{ORG}/vit-nki:GeLU"}
    )
    fused = ViTForImageClassification.from_pretrained(
        tmp,
        dtype=torch.bfloat16,
        device_map="neuron",
        use_kernels=True,
        kernel_config=config,
        attn_implementation=ATTENTION,
    ).eval()
    return base, fused, torch.randn(1, 3, 224, 224, dtype=torch.bfloat16)


def estimate(model, x):
    with torch.no_grad(), TrainiumEstimate("trn2") as est:
        model(x)
    return est


def measure(name, base, fused, x, times: Table, top_ops: Table) -> None:
    """One model's row of `times` and its rows of `top_ops`."""
    base_cpu = base
    base = copy.deepcopy(base).to("neuron")
    xd = x.to("neuron")
    with torch.no_grad():
        for m in (base, fused):
            m(xd)  # traces the kernels, warms the allocator
        est_b, est_f = estimate(base, xd), estimate(fused, xd)
        emu_b = median_seconds(lambda: base(xd), repeats=5, warmup=1)
        emu_f = median_seconds(lambda: fused(xd), repeats=5, warmup=1)
        cpu = median_seconds(lambda: base_cpu(x), repeats=5, warmup=1)
    times.add(
        name,
        est_b.total_us,
        est_f.total_us,
        est_f.kernels_us,
        est_b.total_us / est_f.total_us,
        emu_b * 1e3,
        emu_f * 1e3,
        emu_f / emu_b,
        cpu * 1e3,
        emu_b / cpu,
    )
    for label, est in (("without", est_b), ("with", est_f)):
        top_ops.add(name, label, ", ".join(f"{op} x{n} {us:.1f}" for op, n, us in est.top(6)))


def main():
    import tempfile

    build_repositories()
    times = Table(
        "one bf16 forward with and without the NKI kernels",
        [
            "model",
            "Trainium2 estimate without kernels us",
            "estimate with kernels us",
            "of which NKI kernels us",
            "estimated speed-up",
            "emulator without ms",
            "emulator with ms",
            "emulator with/without",
            "CPU without ms",
            "emulator/CPU",
        ],
        note="Against the same model and weights without the kernels (Transformers' attention as named), and on "
        "the CPU without them; estimates for one trn2 NeuronCore; wall times the median of 5.",
    )
    top_ops = Table(
        "the Trainium2 estimate's top ops of each forward",
        ["model", "kernels", "top ops (op x calls us)"],
        note="From the same estimates (torch_neuronx.estimation.step), the six largest ops.",
    )
    for arch in ("llama", "qwen3"):
        model, ids = causal_lm(arch)
        fused = kernelize_lm(copy.deepcopy(model).to("neuron"))
        measure(
            f"{arch}: hidden 512, 4 layers, 8 heads (4 KV), MLP 1408, 256 tokens", model, fused, ids, times, top_ops
        )
    with tempfile.TemporaryDirectory() as tmp:
        for attn in ("sdpa", "eager"):
            base, fused, x = vit_base_layer(tmp, attn)
            measure(
                f"ViT-Base-shaped layer (768, 12 heads, MLP 3072, 197 tokens), baseline attention {attn!r}",
                base,
                fused,
                x,
                times,
                top_ops,
            )
    report("kernel_hub", [times, top_ops])


if __name__ == "__main__":
    main()

"""NKI kernels on the emulator against the same math in eager PyTorch on
`neuron`, at the sizes AWS's tutorials use (examples/nki): median time per
call, ratio NKI / eager (target <= 3), and the kernel's Trainium
estimate. Inputs are neuron tensors; each kernel's first call (its trace) is
in the warm-up.

Run: .venv/bin/python benchmarks/estimates/nki.py
"""

import importlib

import _shared  # noqa: F401  (benchmarks/ on sys.path: the shared helpers)
import torch
import torch.nn.functional as F
from _figures import Table, report
from _timing import median_seconds

import torch_neuronx
from examples.nki import attention, layernorm, matmul, rmsnorm, softmax, tensor_add


def dev(*tensors):
    return [t.to("neuron") for t in tensors]


def cases():
    torch.manual_seed(0)
    a, b = dev(torch.rand(256, 1024, dtype=torch.bfloat16), torch.rand(256, 1024, dtype=torch.bfloat16))
    yield "tensor_add bf16 (256, 1024), grid (2, 2)", lambda: tensor_add.nki_tensor_add(a, b), lambda: a + b, 30

    add_nisa = importlib.import_module("examples.nki.tensor_add_nisa")  # sets NEURON_PLATFORM_TARGET_OVERRIDE=trn1
    fa, fb = dev(torch.randn(256, 1024), torch.randn(256, 1024))
    yield "tensor_add_nisa fp32 (256, 1024)", lambda: add_nisa.nki_tensor_add(fa, fb), lambda: fa + fb, 30
    import os

    os.environ.pop("NEURON_PLATFORM_TARGET_OVERRIDE", None)

    lhs, rhs = dev(torch.rand(4096, 1024, dtype=torch.bfloat16), torch.rand(1024, 2048, dtype=torch.bfloat16))
    for name in (
        "nki_matmul_tiled_",
        "nki_matmul_hoist_load_",
        "nki_matmul_block_free_dimension_",
        "nki_matmul_fully_optimized_",
    ):
        k = getattr(matmul, name)
        yield f"matmul {name} bf16 (4096, 1024) @ (1024, 2048)", lambda k=k: k(lhs.T, rhs), lambda: lhs @ rhs, 3

    x = dev(torch.randn(300, 1000))[0]
    yield "softmax fp32 (300, 1000)", lambda: softmax.nki_softmax_kernel(x), lambda: torch.softmax(x, dim=1), 15

    r, g = dev(torch.rand(250, 512), torch.rand(512))

    def rms_eager():
        return r * torch.rsqrt(r.square().mean(dim=1, keepdim=True)) * g

    yield "rmsnorm fp32 (250, 512)", lambda: rmsnorm.nki_rmsnorm_kernel(r, g), rms_eager, 15

    ln, gamma, beta = dev(torch.rand(4096, 8192), torch.rand(8192), torch.rand(8192))
    for v in ("v1", "v2"):
        k = getattr(layernorm, f"nki_layernorm_kernel_{v}")
        yield (
            f"layernorm {v} fp32 (4096, 8192)",
            lambda k=k: k(ln, 1e-5, gamma, beta),
            lambda: F.layer_norm(ln, (8192,), gamma, beta, 1e-5),
            3,
        )

    q, kk, vv = dev(torch.rand(4096, 64), torch.rand(4096, 64), torch.rand(4096, 64))

    def attn_eager():
        return torch.softmax((q * 0.125) @ kk.T, dim=1) @ vv

    yield (
        "fused self-attention fp32 (4096, 64)",
        lambda: attention.fused_self_attn_for_SD_small_head_size(q, kk, vv),
        attn_eager,
        3,
    )


def main():
    table = Table(
        "NKI kernels on the emulator against eager PyTorch on neuron",
        ["kernel", "NKI ms", "eager ms", "NKI/eager", "Trainium estimate us", "target", "bound"],
        note="Against the same math in eager PyTorch on neuron (target: NKI/eager <= 3); median per call, "
        "the kernel's first call (its trace) in the warm-up; the estimate is the kernel's last_estimate().",
    )
    rows = []
    for name, nki_fn, eager_fn, repeats in cases():
        t_nki = median_seconds(nki_fn, repeats=repeats, warmup=2)
        est = torch_neuronx.nki.last_estimate()
        t_eager = median_seconds(eager_fn, repeats=repeats, warmup=2)
        rows.append((name, t_nki, t_eager))
        table.add(name, t_nki * 1e3, t_eager * 1e3, t_nki / t_eager, est.total_us, est.target, est.bottleneck)
        print(f"{name}: done", flush=True)
    report("nki", [table])
    return rows


if __name__ == "__main__":
    main()

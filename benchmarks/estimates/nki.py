"""NKI kernels on the emulator against the same math in eager PyTorch on
`neuron`: the project's kernels (examples/nki) at sizes of the jobs they
stand for: median time per call, ratio NKI / eager (target <= 3), and the
kernel's Trainium estimate. Inputs are neuron tensors; each kernel's first
call (its trace) is in the warm-up.

Run: .venv/bin/python benchmarks/estimates/nki.py
"""

import _shared  # noqa: F401  (benchmarks/ on sys.path: the shared helpers)
import torch
import torch.nn.functional as F
from _figures import Table, report
from _timing import median_seconds

import torch_neuronx
from examples.nki import add, attention, layernorm, matmul, rmsnorm, softmax


def dev(*tensors):
    return [t.to("neuron") for t in tensors]


def cases():
    torch.manual_seed(0)
    a, b = dev(torch.rand(256, 1024, dtype=torch.bfloat16), torch.rand(256, 1024, dtype=torch.bfloat16))
    yield "add bf16 (256, 1024)", lambda: add.add(a, b), lambda: a + b, 30

    lhs, rhs = dev(torch.rand(4096, 1024, dtype=torch.bfloat16), torch.rand(1024, 2048, dtype=torch.bfloat16))
    yield "matmul bf16 (4096, 1024) @ (1024, 2048)", lambda: matmul.matmul(lhs.T, rhs), lambda: lhs @ rhs, 3

    x = dev(torch.randn(300, 1000))[0]
    yield "softmax fp32 (300, 1000)", lambda: softmax.softmax(x), lambda: torch.softmax(x, dim=1), 15

    r, g = dev(torch.randn(2048, 4096, dtype=torch.bfloat16), torch.rand(4096, dtype=torch.bfloat16))

    def rms_eager():
        rf = r.float()
        return (rf * torch.rsqrt(rf.square().mean(dim=1, keepdim=True) + 1e-6) * g.float()).bfloat16()

    yield "rmsnorm bf16 (2048, 4096)", lambda: rmsnorm.rmsnorm(r, g), rms_eager, 5
    yield "rmsnorm bf16 (2048, 4096), LNC=2", lambda: rmsnorm.rmsnorm[2](r, g), rms_eager, 5

    ln, gamma, beta = dev(torch.rand(4096, 8192), torch.rand(8192), torch.rand(8192))
    yield (
        "layernorm fp32 (4096, 8192)",
        lambda: layernorm.layernorm(ln, gamma, beta),
        lambda: F.layer_norm(ln, (8192,), gamma, beta, 1e-5),
        3,
    )

    q, kk, vv = dev(*(torch.randn(2048, 128, dtype=torch.bfloat16) for _ in range(3)))
    for causal in (False, True):
        yield (
            f"attention bf16 (2048, 128){', causal' if causal else ''}",
            lambda causal=causal: attention.attention(q, kk, vv, causal=causal),
            lambda causal=causal: F.scaled_dot_product_attention(q[None], kk[None], vv[None], is_causal=causal),
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

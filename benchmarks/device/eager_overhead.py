"""Eager op cost on neuron against the CPU, with the copying fallback (every
argument copied to the CPU and back, the previous design) in the same run.

Small ops: median time per op, ratio neuron / CPU (target <= 1.15).
Large ops: throughput ratio neuron / CPU (target >= 0.98).
Tiny Llama (from a config, random weights): a forward at batch 1 x 128 tokens
and one decode step with the KV cache, median time ratio neuron / CPU
(target <= 1.10).

Run: .venv/bin/python benchmarks/device/eager_overhead.py
"""

import statistics
import time

import _shared  # noqa: F401  (benchmarks/ on sys.path: the shared helpers)
import torch
import torch.nn.functional as F
from _figures import Table, report
from _timing import median_seconds

import torch_neuronx
from torch_neuronx import _C


def cases():
    a, b = torch.randn(1000), torch.randn(1000)
    m = torch.randn(64, 64)
    big_m = torch.randn(1024, 1024)
    big_a, big_b = torch.randn(16 << 20), torch.randn(16 << 20)
    soft = torch.randn(4096, 4096)
    img, w = torch.randn(8, 32, 64, 64), torch.randn(64, 32, 3, 3)
    small = [
        ("add 1k", (a, b), lambda x, y: x + y),
        ("mul 1k", (a, b), lambda x, y: x * y),
        ("view + index", (a,), lambda x: x.view(10, 100)[3]),
        ("matmul 64x64", (m,), lambda x: x @ x),
    ]
    large = [
        ("matmul 1024x1024", (big_m,), lambda x: x @ x),
        ("add 16M", (big_a, big_b), lambda x, y: x + y),
        ("softmax 4096x4096", (soft,), lambda x: x.softmax(-1)),
        ("conv2d 8x32x64x64 k3", (img, w), lambda x, k: F.conv2d(x, k, padding=1)),
    ]
    return small, large


def timed(fn, args, inner, repeats):
    return median_seconds(lambda: fn(*args), repeats=repeats, inner=inner)


def op_table(title: str, rows, inner: int, repeats: int, per_op: bool) -> Table:
    """Times each case on CPU, neuron and the copying fallback; ratios of time
    per op (per_op: neuron / CPU) or of throughput (CPU time / neuron time)."""
    unit, scale = ("us", 1e6) if per_op else ("ms", 1e3)
    ratio = "neuron/cpu" if per_op else "throughput neuron/cpu"
    copy_ratio = "copying/cpu" if per_op else "throughput copying/cpu"
    table = Table(
        f"{title} (median of {repeats} x {inner})",
        ["op", f"cpu {unit}", f"neuron {unit}", ratio, f"copying {unit}", copy_ratio],
        note="Against the same op on the CPU; copying: the copying fallback (every argument copied to the CPU "
        f"and back, the previous design) in the same run{', at a tenth of the calls' if inner >= 10 else ''}.",
    )
    for name, args, fn in rows:
        dev = tuple(t.to("neuron") for t in args)
        cpu = timed(fn, args, inner, repeats)
        neuron = timed(fn, dev, inner, repeats)
        _C._set_zero_copy(False)
        copying = timed(fn, dev, max(1, inner // 10), repeats)
        _C._set_zero_copy(True)
        r_neuron, r_copy = (neuron / cpu, copying / cpu) if per_op else (cpu / neuron, cpu / copying)
        table.add(name, cpu * scale, neuron * scale, r_neuron, copying * scale, r_copy)
    return table


def tiny_llama(device: str):
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(
        vocab_size=2048,
        hidden_size=256,
        intermediate_size=688,
        num_hidden_layers=4,
        num_attention_heads=8,
        num_key_value_heads=4,
        max_position_embeddings=512,
    )
    torch.manual_seed(0)
    return LlamaForCausalLM(cfg).eval().to(device)


@torch.no_grad()
def llama_times(device: str, steps: int = 24, repeats: int = 5) -> tuple[float, float]:
    """Median forward time at 1 x 128 tokens and median time of one decode step."""
    model = tiny_llama(device)
    ids = torch.randint(0, 2048, (1, 128)).to(device)
    forward = median_seconds(lambda: model(ids, use_cache=False), repeats=repeats, warmup=2)
    step_times = []
    for _ in range(2):  # the first pass warms the allocator's cache
        out = model(ids, use_cache=True)
        cache, token = out.past_key_values, out.logits[:, -1:].argmax(-1)
        step_times.clear()
        for _ in range(steps):
            start = time.perf_counter()
            out = model(token, past_key_values=cache, use_cache=True)
            token = out.logits[:, -1:].argmax(-1)
            token.cpu()  # the step is done when its token can be read
            step_times.append(time.perf_counter() - start)
    return forward, statistics.median(step_times)


def llama_table() -> Table:
    cpu = llama_times("cpu")
    neuron = llama_times("neuron")
    table = Table(
        "tiny Llama (hidden 256, 4 layers, random weights), eager",
        ["measure", "cpu ms", "neuron ms", "neuron/cpu"],
        note="Against the same model on the CPU: a forward at batch 1 x 128 tokens (median of 5) and one decode "
        "step with the KV cache (median of 24).",
    )
    for name, c, n in (("forward 1x128", cpu[0], neuron[0]), ("decode step", cpu[1], neuron[1])):
        table.add(name, c * 1e3, n * 1e3, n / c)
    return table


def main() -> None:
    torch_neuronx.set_fallback_warnings(False)  # the copying baseline warns for every op
    small, large = cases()
    tables = [
        op_table("small op", small, inner=2000, repeats=15, per_op=True),
        op_table("large op", large, inner=1, repeats=7, per_op=False),
        llama_table(),
    ]
    report("eager_overhead", tables)


if __name__ == "__main__":
    main()

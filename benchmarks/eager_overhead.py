"""Eager op cost on neuron against the CPU, with the copying fallback (every
argument copied to the CPU and back, the previous design) in the same run.

Small ops: median time per op, ratio neuron / CPU (issue 3 target <= 1.15).
Large ops: throughput ratio neuron / CPU (target >= 0.98).

Run: .venv/bin/python benchmarks/eager_overhead.py
"""

import torch
import torch.nn.functional as F

from torch_neuronx import _C
from _timing import median_seconds


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


def main() -> None:
    torch.set_num_threads(torch.get_num_threads())
    small, large = cases()
    print(f"{'small op':<22} | {'cpu us':>8} | {'neuron us':>9} | {'ratio':>6} | {'copying us':>10} | {'ratio':>6}")
    for name, args, fn in small:
        dev = tuple(t.to("neuron") for t in args)
        cpu = timed(fn, args, 2000, 15)
        neuron = timed(fn, dev, 2000, 15)
        _C._set_zero_copy(False)
        copying = timed(fn, dev, 200, 15)
        _C._set_zero_copy(True)
        print(f"{name:<22} | {cpu * 1e6:>8.2f} | {neuron * 1e6:>9.2f} | {neuron / cpu:>6.2f} | "
              f"{copying * 1e6:>10.2f} | {copying / cpu:>6.2f}")
    print(f"\n{'large op':<22} | {'cpu ms':>8} | {'neuron ms':>9} | {'thrpt ratio':>11} | {'copying ms':>10} | {'ratio':>6}")
    for name, args, fn in large:
        dev = tuple(t.to("neuron") for t in args)
        cpu = timed(fn, args, 1, 7)
        neuron = timed(fn, dev, 1, 7)
        _C._set_zero_copy(False)
        copying = timed(fn, dev, 1, 5)
        _C._set_zero_copy(True)
        print(f"{name:<22} | {cpu * 1e3:>8.2f} | {neuron * 1e3:>9.2f} | {cpu / neuron:>11.2f} | "
              f"{copying * 1e3:>10.2f} | {cpu / copying:>6.2f}")


if __name__ == "__main__":
    main()

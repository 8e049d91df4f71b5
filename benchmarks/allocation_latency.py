"""Allocation latency: torch.empty on neuron (the caching allocator, steady
state) against torch.empty on the CPU (its default allocator), in one run.

Run: .venv/bin/python benchmarks/allocation_latency.py
"""

import torch

from _timing import fmt_bytes, median_seconds

SIZES = [512, 64 << 10, 4 << 20, 64 << 20]


def main() -> None:
    print(f"{'size':>9} | {'cpu us':>8} | {'neuron us':>9} | {'ratio':>6}")
    for n in SIZES:
        cpu = median_seconds(lambda: torch.empty(n, dtype=torch.uint8), repeats=21, inner=2000)
        neuron = median_seconds(lambda: torch.empty(n, dtype=torch.uint8, device="neuron"), repeats=21, inner=2000)
        print(f"{fmt_bytes(n):>9} | {cpu * 1e6:>8.2f} | {neuron * 1e6:>9.2f} | {neuron / cpu:>6.2f}")
    # First-touch cost of a fresh segment (no cache): empty_cache before each.
    def fresh():
        torch.neuron.empty_cache()
        torch.empty(64 << 20, dtype=torch.uint8, device="neuron")
    cold = median_seconds(fresh, repeats=11)
    print(f"cold 64 MiB segment (empty_cache + HAL malloc + free): {cold * 1e6:.1f} us")


if __name__ == "__main__":
    main()

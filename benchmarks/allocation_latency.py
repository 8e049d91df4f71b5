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
    # Fresh memory written once: the page faults of a new segment (a memfd's
    # pages, which other processes can map) against the CPU allocator's
    # (anonymous pages; it maps and unmaps a block this large every time).
    for n in (64 << 20, 256 << 20):

        def cpu_touch():
            torch.empty(n, dtype=torch.uint8).fill_(1)

        def neuron_touch():
            torch.neuron.empty_cache()
            torch.empty(n, dtype=torch.uint8, device="neuron").fill_(1)

        def neuron_warm():
            torch.empty(n, dtype=torch.uint8, device="neuron").fill_(1)

        cpu, cold, warm = (median_seconds(f, repeats=7, warmup=1) for f in (cpu_touch, neuron_touch, neuron_warm))
        print(
            f"first write of {fmt_bytes(n)}: cpu {cpu * 1e3:.1f} ms, neuron fresh segment {cold * 1e3:.1f} ms "
            f"({cold / cpu:.2f}x), neuron cached segment {warm * 1e3:.1f} ms"
        )


if __name__ == "__main__":
    main()

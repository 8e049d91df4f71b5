"""Allocation latency: torch.empty on neuron (the caching allocator, steady
state) against torch.empty on the CPU (its default allocator), in one run.

Run: .venv/bin/python benchmarks/device/allocation_latency.py
"""

import _shared  # noqa: F401  (benchmarks/ on sys.path: the shared helpers)
import torch
from _figures import Table, report
from _timing import fmt_bytes, median_seconds

SIZES = [512, 64 << 10, 4 << 20, 64 << 20]


def main() -> None:
    steady = Table(
        "torch.empty, steady state (median of 21 x 2,000 calls)",
        ["size", "cpu us", "neuron us", "neuron/cpu"],
        note="Against torch.empty on the CPU (its default allocator); neuron's caching allocator holds the block.",
    )
    for n in SIZES:
        cpu = median_seconds(lambda: torch.empty(n, dtype=torch.uint8), repeats=21, inner=2000)
        neuron = median_seconds(lambda: torch.empty(n, dtype=torch.uint8, device="neuron"), repeats=21, inner=2000)
        steady.add(fmt_bytes(n), cpu * 1e6, neuron * 1e6, neuron / cpu)

    # First-touch cost of a fresh segment (no cache): empty_cache before each.
    def fresh():
        torch.neuron.empty_cache()
        torch.empty(64 << 20, dtype=torch.uint8, device="neuron")

    cold_segment = Table(
        "a fresh segment (no cache), median of 11",
        ["measure", "neuron us"],
        note="empty_cache before each call: the HAL's malloc and free of a new segment.",
    )
    cold_segment.add("cold 64 MiB segment (empty_cache + HAL malloc + free)", median_seconds(fresh, repeats=11) * 1e6)
    # Fresh memory written once: the page faults of a new segment (a memfd's
    # pages, which other processes can map) against the CPU allocator's
    # (anonymous pages; it maps and unmaps a block this large every time).
    first_write = Table(
        "first write of fresh memory (torch.empty + fill_, median of 7)",
        ["size", "cpu ms", "neuron fresh segment ms", "fresh/cpu", "neuron cached segment ms"],
        note="Against the CPU allocator, which maps and unmaps a block this large every time (anonymous pages); "
        "neuron's fresh segment is a memfd's pages (empty_cache before each), its cached one is reused.",
    )
    for n in (64 << 20, 256 << 20):

        def cpu_touch():
            torch.empty(n, dtype=torch.uint8).fill_(1)

        def neuron_touch():
            torch.neuron.empty_cache()
            torch.empty(n, dtype=torch.uint8, device="neuron").fill_(1)

        def neuron_warm():
            torch.empty(n, dtype=torch.uint8, device="neuron").fill_(1)

        cpu, cold, warm = (median_seconds(f, repeats=7, warmup=1) for f in (cpu_touch, neuron_touch, neuron_warm))
        first_write.add(fmt_bytes(n), cpu * 1e3, cold * 1e3, cold / cpu, warm * 1e3)
    report("allocation_latency", [steady, cold_segment, first_write])


if __name__ == "__main__":
    main()

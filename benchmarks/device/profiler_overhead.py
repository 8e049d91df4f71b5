"""What observing the device costs: one training step of a small MLP
(median of repeated steps) on the CPU, on neuron as is, with a CPU-only
torch.profiler, with the neuron device tracks (ProfilerActivity.PrivateUse1:
the trace buffer, flows, the estimated track at stop) and in strict mode
(warn: the C++ hook installed). Ratios against neuron as is, in one run.

Run: .venv/bin/python benchmarks/device/profiler_overhead.py
"""

import contextlib
import statistics
import time

import _shared  # noqa: F401  (benchmarks/ on sys.path: the shared helpers)
import torch
from _figures import Table, report
from torch.profiler import ProfilerActivity, profile

import torch_neuronx

ROUNDS, STEPS = 9, 8  # cases interleaved round by round: this VM's speed drifts


def make(device):
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 512),
        torch.nn.GELU(),
        torch.nn.Linear(512, 256),
        torch.nn.LayerNorm(256),
        torch.nn.Linear(256, 10),
    ).to(device)
    opt = torch.optim.AdamW(model.parameters())
    x = torch.randn(64, 256).to(device)

    def step():
        model(x).square().mean().backward()
        opt.step()
        opt.zero_grad()

    return step


def round_ms(step, context) -> float:
    """Median step time of one round inside `context`."""
    times = []
    with context():
        for _ in range(STEPS):
            start = time.perf_counter()
            step()
            times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def main() -> None:
    cases = [
        ("cpu", "cpu", contextlib.nullcontext),
        ("neuron", "neuron", contextlib.nullcontext),
        ("neuron + profiler (CPU only)", "neuron", lambda: profile(activities=[ProfilerActivity.CPU])),
        (
            "neuron + profiler (device tracks)",
            "neuron",
            lambda: profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]),
        ),
        ("neuron + strict mode (warn)", "neuron", lambda: torch_neuronx.strict("warn")),
    ]
    steps = {name: make(device) for name, device, _ in cases}
    for name, _, _ in cases:
        for _ in range(3):
            steps[name]()  # warm
    rounds = {name: [] for name, _, _ in cases}
    for _ in range(ROUNDS):
        for name, _, context in cases:
            rounds[name].append(round_ms(steps[name], context))
    results = [(name, statistics.median(rounds[name])) for name, _, _ in cases]
    base = dict(results)["neuron"]
    table = Table(
        f"one training step (MLP 256-512-256, batch 64, AdamW), median of {ROUNDS} rounds x {STEPS} steps",
        ["case", "ms", "x neuron"],
        note="Against neuron as is (no profiler, no strict mode); the cases interleaved round by round.",
    )
    for name, ms in results:
        table.add(name, ms, ms / base)
    report("profiler_overhead", [table])


if __name__ == "__main__":
    main()

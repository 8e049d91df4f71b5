"""The one loose performance gate: small eager ops on neuron may
cost at most 1.5x the same ops on the CPU. It catches a silent fall back to a
slow path (the copying fallback costs 2-5x); it is not the benchmark
(benchmarks/device/eager_overhead.py measures against the 1.15 target).

Each side keeps the best of several medians, and a ratio over the gate is
measured again (twice at most), so a noisy neighbour on the machine does not
fail the test while a slow path still does: turning zero-copy off
(torch_neuronx._C._set_zero_copy(False)) fails every case but view + index,
which launches no kernel."""

import statistics
import time

import pytest
import torch

GATE = 1.5


def best_median_us(fn, rounds: int = 5, repeats: int = 9, inner: int = 300) -> float:
    for _ in range(inner):
        fn()
    medians = []
    for _ in range(rounds):
        samples = []
        for _ in range(repeats):
            start = time.perf_counter()
            for _ in range(inner):
                fn()
            samples.append((time.perf_counter() - start) / inner)
        medians.append(statistics.median(samples))
    return min(medians) * 1e6


CASES = {
    "add 1k": (lambda: (torch.randn(1000), torch.randn(1000)), lambda x, y: x + y),
    "mul 1k": (lambda: (torch.randn(1000), torch.randn(1000)), lambda x, y: x * y),
    "view + index": (lambda: (torch.randn(1000),), lambda x: x.view(10, 100)[3]),
    "matmul 64x64": (lambda: (torch.randn(64, 64),), lambda x: x @ x),
}


@pytest.mark.parametrize("name", list(CASES))
def test_small_op_costs_at_most_one_and_a_half_times_the_cpu(name):
    make, fn = CASES[name]
    cpu_args = make()
    dev_args = tuple(t.to("neuron") for t in cpu_args)
    ratios = []
    for _ in range(3):  # a retry only for a ratio over the gate: noise, or real
        cpu = best_median_us(lambda: fn(*cpu_args))
        dev = best_median_us(lambda: fn(*dev_args))
        ratios.append(dev / cpu)
        if ratios[-1] <= GATE:
            break
    assert min(ratios) <= GATE, f"{name}: neuron/CPU time ratio {min(ratios):.2f} > {GATE} (tries: {ratios})"

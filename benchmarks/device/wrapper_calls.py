"""The calls Inductor's generated Python wrapper makes per graph, neuron
against the CPU wrapper's allocating a buffer
(`_C._empty_strided_neuron` against `empty_strided_cpu`, and the generic
`torch.empty_strided(device="neuron")` the wrapper used before) and the
per-graph wait for producers (`_C._before_host_kernels`). Best of repeated
timeit runs, in ns per call.

Run: .venv/bin/python benchmarks/device/wrapper_calls.py
"""

import timeit

import _shared  # noqa: F401  (benchmarks/ on sys.path: the shared helpers)
import torch
import torch_neuronx._C as C
from _figures import Table, report

N = 200_000
SIZE, STRIDE = (4, 128), (128, 1)


def ns(fn) -> float:
    return min(timeit.repeat(fn, number=N, repeat=5)) / N * 1e9


def main() -> None:
    empty_cpu = torch._C._dynamo.guards._empty_strided_cpu
    C._empty_strided_neuron(SIZE, STRIDE, torch.float32, 0)  # starts the runtime
    rows = [
        ("CPU wrapper: empty_strided_cpu", lambda: empty_cpu(SIZE, STRIDE, torch.float32)),
        ("neuron wrapper: _C._empty_strided_neuron", lambda: C._empty_strided_neuron(SIZE, STRIDE, torch.float32, 0)),
        (
            "before: torch.empty_strided(device='neuron')",
            lambda: torch.empty_strided(SIZE, STRIDE, device="neuron", dtype=torch.float32),
        ),
        ("neuron wrapper: _C._before_host_kernels (once per graph)", lambda: C._before_host_kernels(0)),
    ]
    times = {name: ns(fn) for name, fn in rows}
    base = times[rows[0][0]]
    table = Table(
        f"Inductor wrapper calls, ns per call (best of 5 x {N:,})",
        ["call", "ns", "vs empty_strided_cpu"],
        note="Against the CPU wrapper's empty_strided_cpu of the same (4, 128) float32 buffer.",
    )
    for name, t in times.items():
        table.add(name, t, t / base)
    report("wrapper_calls", [table])


if __name__ == "__main__":
    main()

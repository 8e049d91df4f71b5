"""Forward and backward of small and large MLPs on neuron, with the backward
on the calling thread (the emulator's default, torch_neuronx/_autograd_thread.py)
and on autograd's device thread (TORCH_NEURONX_AUTOGRAD_THREAD=1), against the
CPU. Each setting runs in its own process with OMP_NUM_THREADS=2, which times
the CPU and neuron models in alternating rounds (so the VM's drifting speed
hits both alike); the medians of 12 rounds.

Run: .venv/bin/python benchmarks/device/autograd_thread.py
"""

import os
import subprocess
import sys

import _shared  # noqa: F401  (benchmarks/ on sys.path: the shared helpers)
from _figures import Table, report

WORKER = r"""
import statistics, sys, time, torch, torch_neuronx
width, batch = int(sys.argv[1]), int(sys.argv[2])

def stepper(device):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(width, 2 * width), torch.nn.GELU(),
                                torch.nn.Linear(2 * width, width)).to(device)
    x = torch.randn(batch, width, device=device)
    def step():
        y = model(x).sum()
        y.backward()
        y.item()
    return step

steps = {d: stepper(d) for d in ("cpu", "neuron")}
inner = max(2, 20000 // (width * batch // 64))
rounds = {d: [] for d in steps}
for _ in range(12):
    for d, step in steps.items():
        for _ in range(2):
            step()
        start = time.perf_counter()
        for _ in range(inner):
            step()
        rounds[d].append((time.perf_counter() - start) / inner)
print(statistics.median(rounds["cpu"]), statistics.median(rounds["neuron"]))
"""

SETTINGS = [("calling thread", {}), ("device thread", {"TORCH_NEURONX_AUTOGRAD_THREAD": "1"})]


def run(extra: dict, width: int, batch: int) -> tuple[float, float]:
    env = dict(os.environ, OMP_NUM_THREADS="2", **extra)
    out = subprocess.run(
        [sys.executable, "-c", WORKER, str(width), str(batch)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    ).stdout
    cpu, neuron = map(float, out.split()[-2:])
    return cpu, neuron


def main() -> None:
    table = Table(
        "MLP forward + backward, us per step (median of 12 rounds)",
        ["MLP (width, batch)", "neuron's backward on", "cpu us", "neuron us", "neuron/cpu"],
        note="Against the same MLP on the CPU, timed in alternating rounds in the same process "
        "(OMP_NUM_THREADS=2); each setting of TORCH_NEURONX_AUTOGRAD_THREAD in its own process.",
    )
    for width, batch in ((256, 64), (1024, 256)):
        for name, extra in SETTINGS:
            cpu, neuron = run(extra, width, batch)
            table.add(f"{width}, {batch}", name, cpu * 1e6, neuron * 1e6, neuron / cpu)
    report("autograd_thread", [table])


if __name__ == "__main__":
    main()

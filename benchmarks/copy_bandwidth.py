"""Host-to-device and device-to-host copy bandwidth on the emulator, against a
plain host memcpy (ctypes.memmove) of the same size, in one run.

Run: .venv/bin/python benchmarks/copy_bandwidth.py
"""

import ctypes
import os

import torch
from _timing import fmt_bytes, median_seconds

SIZES = [4 << 10, 256 << 10, 4 << 20, 64 << 20, 256 << 20]


def gbps(nbytes: int, seconds: float) -> float:
    return nbytes / seconds / 1e9


def main() -> None:
    print(
        f"torch {torch.__version__}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, "
        f"queue={os.environ.get('TORCH_NEURONX_EMU_QUEUE', 'inline')}"
    )
    print(
        f"{'size':>9} | {'memcpy GB/s':>11} | {'H2D GB/s':>9} {'ratio':>6} | {'H2D pinned':>10} {'ratio':>6} | "
        f"{'D2H GB/s':>9} {'ratio':>6} | {'D2D GB/s':>9} {'ratio':>6}"
    )
    for n in SIZES:
        repeats = 30 if n <= (4 << 20) else 8
        inner = 200 if n <= (256 << 10) else 1
        src = torch.randint(0, 255, (n,), dtype=torch.uint8)
        dst = torch.empty(n, dtype=torch.uint8)
        pinned = src.pin_memory()
        dev = torch.empty(n, dtype=torch.uint8, device="neuron")
        dev2 = torch.empty(n, dtype=torch.uint8, device="neuron")
        memcpy = median_seconds(lambda: ctypes.memmove(dst.data_ptr(), src.data_ptr(), n), repeats, inner)
        h2d = median_seconds(lambda: dev.copy_(src), repeats, inner)
        h2d_pinned = median_seconds(
            lambda: (dev.copy_(pinned, non_blocking=True), torch.neuron.synchronize()), repeats, inner
        )
        d2h = median_seconds(lambda: dst.copy_(dev), repeats, inner)
        d2d = median_seconds(lambda: (dev2.copy_(dev), torch.neuron.synchronize()), repeats, inner)
        ref = gbps(n, memcpy)
        cols = [gbps(n, t) for t in (h2d, h2d_pinned, d2h, d2d)]
        print(f"{fmt_bytes(n):>9} | {ref:>11.2f} | " + " | ".join(f"{c:>9.2f} {c / ref:>6.2f}" for c in cols))
        assert torch.equal(dst, src)


if __name__ == "__main__":
    main()

"""Host-to-device and device-to-host copy bandwidth on the emulator, against a
plain host memcpy (ctypes.memmove) of the same size, in one run.

Run: .venv/bin/python benchmarks/device/copy_bandwidth.py
"""

import ctypes
import os

import _shared  # noqa: F401  (benchmarks/ on sys.path: the shared helpers)
import torch
from _figures import Table, report
from _timing import fmt_bytes, median_seconds

SIZES = [4 << 10, 256 << 10, 4 << 20, 64 << 20, 256 << 20]


def gbps(nbytes: int, seconds: float) -> float:
    return nbytes / seconds / 1e9


def main() -> None:
    table = Table(
        f"copy bandwidth, GB/s (queue {os.environ.get('TORCH_NEURONX_EMU_QUEUE', 'inline')})",
        [
            "size",
            "memcpy GB/s",
            "H2D GB/s",
            "H2D/memcpy",
            "H2D pinned GB/s",
            "H2D pinned/memcpy",
            "D2H GB/s",
            "D2H/memcpy",
            "D2D GB/s",
            "D2D/memcpy",
        ],
        note="Against a host memcpy (ctypes.memmove) of the same bytes; median of 30 repeats up to 4 MiB, "
        "8 above (200 copies per repeat up to 256 KiB).",
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
        table.add(fmt_bytes(n), ref, *(x for c in cols for x in (c, c / ref)))
        assert torch.equal(dst, src)
    report("copy_bandwidth", [table])


if __name__ == "__main__":
    main()

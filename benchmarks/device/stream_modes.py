"""The emulator's queue modes side by side: inline (work runs on the caller,
the default) and thread (a worker thread per stream). Per-call latency of a
small host-to-device copy, an event record+query, a 1 MiB host-to-device copy,
and ten queued 1 MiB device-to-device copies then a synchronize, each mode
in its own process (the mode is read at start-up).

Run: .venv/bin/python benchmarks/device/stream_modes.py
"""

import json
import os
import subprocess
import sys

import _shared  # noqa: F401  (benchmarks/ on sys.path: the shared helpers)
from _figures import Table, report

CHILD = r"""
import json, torch, sys
sys.path.insert(0, sys.argv[1])
from _timing import median_seconds
small = torch.ones(256); dev = torch.empty(256, device='neuron')
big = torch.ones(1 << 18); devbig = torch.empty(1 << 18, device='neuron'); devbig2 = torch.empty_like(devbig)
ev = torch.neuron.Event()
out = {
  'small_copy_us': median_seconds(lambda: dev.copy_(small), repeats=21, inner=2000) * 1e6,
  'event_us': median_seconds(lambda: (ev.record(), ev.query()), repeats=21, inner=2000) * 1e6,
  'copy_1mib_us': median_seconds(lambda: devbig.copy_(big), repeats=21, inner=200) * 1e6,
  'ten_d2d_1mib_then_sync_us': median_seconds(lambda: ([devbig2.copy_(devbig) for _ in range(10)],
                                                 torch.neuron.synchronize()), repeats=21, inner=20) * 1e6,
}
print(json.dumps(out))
"""
MEASURES = {
    "small_copy_us": "host-to-device copy, 1 KiB",
    "event_us": "event record + query",
    "copy_1mib_us": "host-to-device copy, 1 MiB",
    "ten_d2d_1mib_then_sync_us": "ten device-to-device copies of 1 MiB, then synchronize",
}


def run(mode: str) -> dict:
    env = dict(os.environ, TORCH_NEURONX_EMU_QUEUE=mode, TORCH_NEURONX_FALLBACK_WARN="0")
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # benchmarks/: _timing
    proc = subprocess.run([sys.executable, "-c", CHILD, here], env=env, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    inline, thread = run("inline"), run("thread")
    table = Table(
        "emulator queue modes: us per call (median of 21)",
        ["measure", "inline us", "thread us", "thread/inline"],
        note="Against the inline queue (the default: work runs on the caller); "
        "each mode in its own process (TORCH_NEURONX_EMU_QUEUE).",
    )
    for key in inline:
        table.add(MEASURES.get(key, key), inline[key], thread[key], thread[key] / inline[key])
    report("stream_modes", [table])


if __name__ == "__main__":
    main()

"""Instructions per small eager op, neuron against the CPU, counted by
callgrind (stable where timings on a shared VM are not): a process doing
2,200 adds of 1,000 floats, with collection on only inside torch.add's C++
entry (THPVariable_add: argument parsing, dispatch, the kernel and the
output's allocation; the output's free, when the Python loop drops it, and the
loop itself fall outside); per op = collected / 2,200, in total and in this
project's library. Needs valgrind; two runs of about two minutes.

--whole-process counts everything instead, as N = 2,000 adds minus N = 0 (four
runs): it includes the free and the Python loop, but start-up differs from run
to run by more than the per-op signal at times (one run gave the CPU a
negative count), so read it only beside a repeat.

Run: .venv/bin/python benchmarks/device/op_instructions.py [--whole-process]
"""

import os
import re
import subprocess
import sys
import tempfile

import _shared  # noqa: F401  (benchmarks/ on sys.path: the shared helpers)
from _figures import Table, report

N = 2200
PROGRAM = """
import sys, torch, torch_neuronx
dev, n = sys.argv[1], int(sys.argv[2])
a = torch.ones(1000, device=dev); b = torch.ones(1000, device=dev)
for _ in range(n): torch.add(a, b)
"""
# Identical code folded across libraries gets attributed to whichever one
# callgrind names first; these templates are not this library's work.
FOLDED = (
    "Sp_counted",
    "KernelFunction",
    "basic_string",
    "FunctionSchema",
    "TypePtr",
    "TorchLibraryInit",
    "fmt::",
    "AliasInfo",
    "vector<c10::Argument",
)


def run(tmp: str, device: str, n: int, whole: bool = False) -> tuple[int, int]:
    """(instructions inside torch.add, or in the whole process, of which in
    libtorch_neuronx) of one run."""
    out = os.path.join(tmp, f"{device}.{n}.out")
    only_add = [] if whole else ["--collect-atstart=no", "--toggle-collect=torch::autograd::THPVariable_add*"]
    subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={out}",
            *only_add,
            sys.executable,
            "-c",
            PROGRAM,
            device,
            str(n),
        ],
        check=True,
        capture_output=True,
        env=dict(os.environ, PYTHONHASHSEED="0"),
    )
    text = subprocess.run(
        ["callgrind_annotate", "--inclusive=no", "--threshold=100", out], check=True, capture_output=True, text=True
    ).stdout
    total = int(re.search(r"^summary: (\d+)", open(out).read(), re.M).group(1))
    ours = 0
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) \([^)]*\)\s+(.*)", line)
        if m and "libtorch_neuronx" in m.group(2) and not any(f in m.group(2) for f in FOLDED):
            ours += int(m.group(1).replace(",", ""))
    return total, ours


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        rows = {}
        whole = "--whole-process" in sys.argv
        for device in ("cpu", "neuron"):
            if whole:
                (t0, o0), (t1, o1) = run(tmp, device, 0, True), run(tmp, device, N, True)
                rows[device] = ((t1 - t0) / N, (o1 - o0) / N)
            else:
                total, ours = run(tmp, device, N)
                rows[device] = (total / N, ours / N)
    cpu = rows["cpu"][0]
    table = Table(
        "torch.add of 1,000 floats: instructions per op (callgrind)",
        ["device", "instructions per op", "in libtorch_neuronx", "vs cpu"],
        note="Against the same op on the CPU. "
        + (
            f"Whole process: N = {N:,} adds minus N = 0 (includes the free and the Python loop; start-up varies "
            "between runs, read it beside a repeat)."
            if whole
            else f"Collected inside torch.add's C++ entry only (THPVariable_add), {N:,} adds."
        ),
    )
    for device, (total, ours) in rows.items():
        table.add(device, total, ours, total / cpu)
    report("op_instructions_whole_process" if whole else "op_instructions", [table])


if __name__ == "__main__":
    main()

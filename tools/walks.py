"""The two walks of docs/architecture.md, counted: which of the project's C++
files run for a tensor's bytes (`torch.empty` on neuron, then a host write) and
for an `all_reduce` (world 2).

Each walk runs under valgrind's callgrind twice in fresh processes, once
without the measured call and once with it repeated N times; a file is on the
walk when its instruction count grows by at least N (it ran once or more per
call). Files are attributed by the line tables of the build (`-g1`), so
inlined headers count where their code runs. Prints each walk's files, and
writes build/bench/walks.json for `make figures`.

Run: .venv/bin/python tools/walks.py   (about two minutes; needs valgrind)
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

REPEATS = 50

BYTES = r"""
import sys, torch, torch_neuronx
n = int(sys.argv[1])
torch.empty(8, device="neuron").fill_(1.0)  # the runtime started
kept = []
for _ in range(n):
    t = torch.empty(1 << 19, device="neuron")  # 2 MiB, kept: a new segment from the driver each time
    t.fill_(2.0)
    kept.append(t)
"""

ALL_REDUCE = r"""
import os, sys, datetime, torch, torch.distributed as dist, torch_neuronx
n = int(sys.argv[1])
dist.init_process_group("neuron", timeout=datetime.timedelta(seconds=300))
x = torch.ones(2048, device="neuron")
dist.all_reduce(x)  # the group's segment and worker started
for _ in range(n):
    dist.all_reduce(x)
dist.barrier()
dist.destroy_process_group()
"""


def callgrind_command(script: str, n: int, out: Path) -> list[str]:
    """`python -c script n` under callgrind, line numbers kept, profile to `out`."""
    return [
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={out}",
        "--dump-line=yes",
        sys.executable,
        "-c",
        script,
        str(n),
    ]


def callgrind(script: str, n: int, out: Path, env: dict) -> None:
    cmd = callgrind_command(script, n, out)
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=1800)


def per_file(path: Path) -> dict[str, int]:
    """Self instructions per source file of the project in a callgrind output
    (inlined code counted in the file it comes from)."""
    counts: dict[str, int] = {}
    names: dict[str, str] = {}  # callgrind's compressed file names, shared by fl/fi/fe/cfi/cfl
    fl = current = None
    skip = False  # the cost line after calls= is the callee's inclusive cost
    for line in path.read_text(errors="replace").splitlines():
        m = re.match(r"(fl|fi|fe|cfi|cfl)=\((\d+)\)(?: (.*))?$", line)
        if m:
            if m.group(3):
                names[m.group(2)] = m.group(3)
            if m.group(1) == "fl":
                fl = current = names.get(m.group(2))
            elif m.group(1) in ("fi", "fe"):
                current = names.get(m.group(2))
            continue
        if line.startswith("fn="):
            current = fl
        elif line.startswith("calls="):
            skip = True
        elif line[:1] in "0123456789+-*" and line:
            if skip:
                skip = False
                continue
            parts = line.split()
            rel = _project_file(current) if current else None
            if rel and len(parts) >= 2:
                counts[rel] = counts.get(rel, 0) + int(parts[1])
    return counts


@functools.cache
def _project_file(name: str) -> str | None:
    """`name` relative to the checkout when it is a source of csrc/ or hal/
    (not a header of torch's under site-packages, whose path also has a
    csrc/). The line tables may name another checkout's path: ccache shares
    objects between checkouts (cmake/NeuronUnity.cmake)."""
    parts = Path(os.path.normpath(name)).parts
    if "site-packages" in parts:
        return None
    for i, part in enumerate(parts):
        if part in ("csrc", "hal") and ROOT.joinpath(*parts[i:]).is_file():
            return str(Path(*parts[i:]))
    return None


def walk(name: str, script: str, ranks: int) -> list[str]:
    env = dict(os.environ, OMP_NUM_THREADS="1", TORCH_NEURONX_FALLBACK_WARN="0")
    with tempfile.TemporaryDirectory() as tmp:
        totals = {}
        for n in (0, REPEATS):
            if ranks == 1:
                out = Path(tmp) / f"{name}.{n}.out"
                callgrind(script, n, out, env)
                totals[n] = per_file(out)
            else:
                totals[n] = _ranks(script, n, ranks, Path(tmp), env)
    grown = {f: totals[REPEATS].get(f, 0) - totals[0].get(f, 0) for f in totals[REPEATS]}
    return sorted(f for f, d in grown.items() if d >= REPEATS)


def _ranks(script: str, n: int, world: int, tmp: Path, env: dict) -> dict[str, int]:
    """Rank 0's counts of a world-size run (both ranks under callgrind)."""
    procs, outs = [], []
    for rank in range(world):
        out = tmp / f"rank{rank}.{n}.out"
        outs.append(out)
        e = dict(
            env,
            RANK=str(rank),
            WORLD_SIZE=str(world),
            LOCAL_RANK=str(rank),
            LOCAL_WORLD_SIZE=str(world),
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=str(29400 + n % 97),
        )
        cmd = callgrind_command(script, n, out)
        procs.append(subprocess.Popen(cmd, env=e, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    for p in procs:
        if p.wait(timeout=1800) != 0:
            raise RuntimeError(f"a rank of the all_reduce walk failed ({p.args})")
    return per_file(outs[0])


def main() -> None:
    from _figures import Table, report

    walks = {
        "a tensor's bytes (torch.empty + fill_)": walk("bytes", BYTES, 1),
        "an all_reduce (world 2)": walk("all_reduce", ALL_REDUCE, 2),
    }
    tables = []
    for title, files in walks.items():
        t = Table(f"{title}: {len(files)} files", ["file"])
        for f in files:
            t.add(f)
        tables.append(t)
    report("walks", tables)


if __name__ == "__main__":
    main()

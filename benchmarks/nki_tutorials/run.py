"""The NKI tutorial yardstick: AWS's tutorial kernels with their own PyTorch
drivers, unchanged, on `neuron`.

    .venv/bin/python benchmarks/nki_tutorials/run.py PATH [PATH ...]
    make nki-tutorials NKI_TUTORIALS="PATH [PATH ...]"

Each PATH is a checkout (or a folder of one): github.com/aws-neuron/
aws-neuron-sdk (its nki/examples) or github.com/aws-neuron/nki-samples (its
src/nki_samples/tutorials). Every `*_torch.py` driver found under it runs as
the tutorial says (`python matrix_multiplication_torch.py`, in its folder),
in a process of its own with a time limit. The drivers run their kernels on
`torch_xla.device()`, compare with PyTorch and print "NKI and Torch match"
or "... differ" (some also assert); shims/ makes `torch_xla.device()` the
`neuron` device and `neuronxcc.nki` (NKI before 0.3) another name of `nki`.
A driver passes when it exits 0 and prints no "differ".

The checkouts are read, never changed; nothing of them enters this tree.
Prints one row per driver (result, seconds, the kernels' Trainium2
estimates, the reason of a failure) and writes build/bench/nki_tutorials.json.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from _figures import Table, report  # noqa: E402

TIMEOUT_S = 1800
_ESTIMATE = re.compile(r"NKI estimate for '([^']+)' on .*?: ([0-9.]+) us")

# Runs a driver as `python driver.py` would, printing each kernel call's
# estimate to stderr (the checkout stays untouched).
_WRAPPER = """
import runpy, sys
import torch_neuronx.nki as nki
from torch_neuronx.nki.jit import Kernel
_call = Kernel._call
def _call_and_print(self, *a, **k):
    out = _call(self, *a, **k)
    e = nki.last_estimate()
    if e is not None:
        print(e, file=sys.stderr, flush=True)
    return out
Kernel._call = _call_and_print
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def drivers(paths: list[Path]) -> list[Path]:
    found = []
    for p in paths:
        found += sorted(f for f in p.rglob("*_torch.py") if ".git" not in f.parts)
    return found


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:160] if lines else ""


def run_driver(path: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(HERE / "shims"), str(path.parent)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    env.setdefault("OMP_NUM_THREADS", "1")
    start = time.monotonic()
    try:
        p = subprocess.run(
            [sys.executable, "-c", _WRAPPER, path.name],
            cwd=path.parent,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )
        code, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        code, out, err = None, e.stdout or "", f"timed out after {TIMEOUT_S} s"
        out = out.decode() if isinstance(out, bytes) else out
    seconds = time.monotonic() - start
    estimates = [(k, float(us)) for k, us in _ESTIMATE.findall(err)]
    if code == 0 and "differ" not in out:
        result, reason = "passed", ""
    elif code == 0:
        result, reason = "differs", next(line for line in out.splitlines() if "differ" in line)
    else:
        result, reason = "failed", _last_line(err) or f"exit {code}"
    return {"driver": path, "result": result, "seconds": seconds, "estimates": estimates, "reason": reason}


def _commit(path: Path) -> str:
    r = subprocess.run(["git", "-C", str(path), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return r.stdout.strip() or "not a git checkout"


def main() -> int:
    paths = [Path(a).resolve() for a in sys.argv[1:]]
    if not paths or not all(p.is_dir() for p in paths):
        sys.exit(f"usage: {sys.argv[0]} PATH [PATH ...] (checkouts of aws-neuron-sdk or nki-samples)")
    found = drivers(paths)
    if not found:
        sys.exit(f"no *_torch.py tutorial driver under {', '.join(map(str, paths))}")
    t = Table(
        "AWS's NKI tutorials on neuron",
        ["driver", "result", "seconds", "kernels: trn2 estimate us", "reason"],
        note="AWS's tutorial kernels run by their own PyTorch drivers, unchanged, with torch_xla.device() "
        "the neuron device; from " + ", ".join(f"{p.name} at {_commit(p)}" for p in paths),
    )
    passed = 0
    for i, d in enumerate(found):
        print(f"[{i + 1}/{len(found)}] {d}", flush=True)
        r = run_driver(d)
        passed += r["result"] == "passed"
        kernels = ", ".join(f"{k} {us:.1f}" for k, us in r["estimates"][:6]) + (
            " ..." if len(r["estimates"]) > 6 else ""
        )
        root = next(p for p in paths if d.is_relative_to(p))
        t.add(f"{root.name}/{d.relative_to(root)}", r["result"], r["seconds"], kernels, r["reason"])
    report("nki_tutorials", [t])
    print(f"{passed} of {len(found)} drivers passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

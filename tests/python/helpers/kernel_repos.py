"""The project's NKI kernel repositories (examples/kernel-repos), copied into a
temporary folder and built there once per test process with
torch_neuronx.kernel_builder (so a test never writes into the checkout, and
two test processes never build the same folder), and the LOCAL_KERNELS value
that makes `get_kernel("torch-neuronx/<name>")` load them with no hub."""

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

from torch_neuronx import kernel_builder

REPOS = Path(__file__).resolve().parents[3] / "examples" / "kernel-repos"
NAMES = ("rmsnorm-nki", "silu-and-mul-nki", "attention-nki", "vit-nki")
ORG = "torch-neuronx"


@functools.cache
def built() -> dict[str, Path]:
    """name -> a copy of the repository (its sources, not its build/) with a
    fresh build/torch-neuron, in a folder removed at exit."""
    root = Path(tempfile.mkdtemp(prefix="kernel-repos-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    out = {}
    for name in NAMES:
        copy = root / name
        shutil.copytree(REPOS / name, copy, ignore=shutil.ignore_patterns("build", "__pycache__"))
        out[name] = kernel_builder.build(copy).parents[1]
    return out


def local_kernels() -> str:
    return ":".join(f"{ORG}/{name}={path}" for name, path in built().items())

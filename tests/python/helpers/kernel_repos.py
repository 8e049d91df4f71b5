"""The project's NKI kernel repositories (examples/kernel-repos), built once
per test process with torch_neuronx.kernel_builder, and the LOCAL_KERNELS
value that makes `get_kernel("torch-neuronx/<name>")` load them with no hub."""

import functools
from pathlib import Path

from torch_neuronx import kernel_builder

REPOS = Path(__file__).resolve().parents[3] / "examples" / "kernel-repos"
NAMES = ("rmsnorm-nki", "silu-and-mul-nki", "attention-nki", "vit-nki")
ORG = "torch-neuronx"


@functools.cache
def built() -> dict[str, Path]:
    """name -> repository path, each with a fresh build/torch-neuron."""
    return {name: kernel_builder.build(REPOS / name).parents[1] for name in NAMES}


def local_kernels() -> str:
    return ":".join(f"{ORG}/{name}={path}" for name, path in built().items())

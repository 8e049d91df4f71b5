"""The kernel repository builder: `python -m torch_neuronx.kernel_builder build
<repo> [<repo> ...]` writes the `build/torch-neuron/` variant of NKI kernel
repositories in kernel-builder's layout (builder.py), for Hugging Face's
`kernels` library."""

from .builder import KernelRepoError, build, main

__all__ = ["KernelRepoError", "build", "main"]

"""Where the backward of neuron tensors runs.

PyTorch's autograd engine gives each non-CPU device a thread of its own,
which for CUDA only launches kernels. The emulator computes on the host, so
that thread does the math, starts a second OpenMP team beside the calling
thread's, and with more OpenMP threads than cores libgomp throttles its
spin-wait: every parallel region of a small op then sleeps and wakes (a
forward and backward of a small MLP took 1.9-2.3x the CPU's time with
OMP_NUM_THREADS=2). So, with the emulator, the backward
runs on the thread that calls it, as a CPU tensor's does:
`torch.autograd.set_multithreading_enabled(False)` on the importing thread
(a thread-local setting: threads started later keep PyTorch's default).
TORCH_NEURONX_AUTOGRAD_THREAD=1 keeps PyTorch's device thread.
"""

import torch

from . import settings


def install() -> None:
    if settings.flag("TORCH_NEURONX_AUTOGRAD_THREAD"):
        return
    if (settings.value("TORCH_NEURONX_DRIVER") or "emu") != "emu":
        return  # a driver whose device computes keeps PyTorch's device thread
    torch._C._set_multithreading_enabled(False)

"""NKI, AWS's Neuron Kernel Interface, on the NeuronCore emulator.

`torch_neuronx.nki` is always this package; it is also importable as `nki`
when AWS's own NKI is not installed (finder.py). Kernels written for
Trainium in AWS's documented style run unchanged on `neuron` tensors (and on
CPU tensors / NumPy arrays through `nki.simulate`), with the hardware's limits
checked and their time on a Trainium core estimated (`last_estimate()`).
See docs/nki.md.

Layers, each importing only those below it (tests/python/project/test_layering.py):
  errors.py, finder.py (stdlib only)  bottom
  chip/        the NeuronCore generation (its numbers: torch_neuronx.trainium), dtypes
  trace/       buffers, instructions, index expressions, tiles, recording one instruction
  isa/         `nki.isa`: one file per engine
  language/    `nki.language`: one file per concept; may use isa's instructions
  cost/        the cost model of a trace
  executor/    plans: fusing, binding to device memory, running
  jit.py       `nki.jit` / Kernel: traces, checks, estimates, runs
  torch_ops.py `nki_op` / `wrap_nki` (torch.library)
  typing.py, collectives.py, lnc.py  `nki.typing`, `nki.collectives`, `nki.lnc`
"""

from . import collectives, isa, language, lnc, typing
from .chip.dtypes import DType as dtype  # `nki.dtype`, the annotation of dtype parameters
from .errors import NKIError, NKIUnsupported
from .finder import install as _install_finder
from .jit import Kernel, jit, last_estimate, simulate, stats

_install_finder()  # `import nki` after `import torch_neuronx` where the .pth did not run (idempotent)

simulate_kernel = None  # set below: AWS's older spelling, simulate_kernel(kernel, *args)


def _simulate_kernel(kernel, *args, **kwargs):
    return simulate(kernel)(*args, **kwargs)


simulate_kernel = _simulate_kernel
baremetal = jit  # AWS's on-device entry point: here the emulator is the device

__all__ = [
    "Kernel",
    "NKIError",
    "NKIUnsupported",
    "baremetal",
    "collectives",
    "dtype",
    "isa",
    "jit",
    "language",
    "last_estimate",
    "lnc",
    "simulate",
    "simulate_kernel",
    "stats",
    "typing",
]

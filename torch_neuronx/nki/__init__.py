"""NKI, AWS's Neuron Kernel Interface, on the NeuronCore emulator.

`torch_neuronx.nki` is always this package; it is also importable as `nki`
when AWS's own NKI is not installed (finder.py). Kernels written for
Trainium in AWS's documented style run unchanged on `neuron` tensors (and on
CPU tensors / NumPy arrays through `nki.simulate`), with the hardware's limits
checked and their time on a Trainium core estimated (`last_estimate()`).
See docs/nki.md.
"""

from . import finder, isa, language  # noqa: F401  (finder: `import nki` after torch_neuronx)
from .errors import NKIError, NKIUnsupported
from .jit import Kernel, jit, last_estimate, simulate, stats

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
    "isa",
    "jit",
    "language",
    "last_estimate",
    "simulate",
    "simulate_kernel",
    "stats",
]

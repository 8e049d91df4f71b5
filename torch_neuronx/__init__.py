"""TorchNeuron: the ``neuron`` device for PyTorch.

Importing this package (or just ``import torch``, through the ``torch.backends``
entry point) registers PrivateUse1 as ``neuron``, installs ``torch.neuron`` and
the ``Tensor.neuron()`` / ``Module.neuron()`` methods. The NeuronCore runtime
itself starts lazily, on the first allocation or stream.
"""


def _autoload() -> None:
    """Entry point of the ``torch.backends`` group: ``import torch`` calls it.

    Registration happens when this package is imported, which loading the entry
    point already did. Defined before ``import torch`` so that ``import
    torch_neuronx`` first (torch then autoloads this partly imported module) works.
    """


import torch  # noqa: E402

from . import _C, settings  # noqa: E402, F401  (_C: the C++ core: allocator, guard, hooks, ops)
from ._compile.metrics import get_dynamo_metrics, reset_dynamo_metrics  # noqa: E402
from .observability.op_tracking import (  # noqa: E402
    clear_op_tracking,
    get_executed_ops,
    get_fallback_ops,
    host_staging_stats,
    reset_host_staging_stats,
    set_fallback_warnings,
)

__all__ = [
    "clear_op_tracking",
    "estimate",
    "get_executed_ops",
    "get_dynamo_metrics",
    "get_fallback_ops",
    "host_staging_stats",
    "nki",
    "nki_op",
    "reset_host_staging_stats",
    "reset_dynamo_metrics",
    "set_fallback_warnings",
    "strict",
    "StrictModeError",
    "StrictModeWarning",
    "wrap_nki",
]

__version__ = "0.1.0"


def _register() -> None:
    bad = settings.check_at_import()
    _C._set_settings_error(" ".join(bad))  # a bad value fails the device's first use, not the import
    if getattr(torch, "neuron", None) is not None and torch._C._get_privateuse1_backend_name() == "neuron":
        return
    from . import neuron as device_module

    torch.utils.rename_privateuse1_backend("neuron")
    torch._register_device_module("neuron", device_module)
    __import__("sys").modules["torch.neuron.memory"] = device_module.memory  # `import torch.neuron.memory` works
    torch.utils.generate_methods_for_privateuse1_backend(for_storage=True)
    _C._register_host_kernels()  # CPU kernels over composite ones, once every library is loaded
    from .estimation import ops as estimation_ops

    _C._set_trace_estimator(estimation_ops.estimate_activities)  # the profiler's estimated-Trainium2 track
    from . import _autograd_thread, _distributed, _exit, _multiprocessing

    _distributed.register()
    _exit.register()
    _autograd_thread.install()
    _multiprocessing.install()


_register()

_LAZY = {
    "nki": ("torch_neuronx.nki", None),
    "nki_op": ("torch_neuronx.nki.torch_ops", "nki_op"),
    "wrap_nki": ("torch_neuronx.nki.torch_ops", "wrap_nki"),
    "estimate": ("torch_neuronx.estimation.step", "TrainiumEstimate"),
    "strict": ("torch_neuronx.observability.strict", "strict"),
    "StrictModeError": ("torch_neuronx.observability.strict", "StrictModeError"),
    "StrictModeWarning": ("torch_neuronx.observability.strict", "StrictModeWarning"),
}

if settings.value("TORCH_NEURONX_STRICT") not in (None, "off"):  # the environment's mode takes effect at import
    from .observability.strict import StrictModeError, StrictModeWarning, strict  # noqa: F401
if settings.value("TORCH_NEURONX_TRACE") or settings.value("TORCH_NEURONX_STRICT") not in (None, "off"):
    from .observability import step_trace as _step_trace  # a window of optimizer steps, traced or estimated

    _step_trace.install()


def __getattr__(name):
    """`torch_neuronx.nki`, `nki_op`, `wrap_nki`, `estimate` and strict mode's names load on first use."""
    if name not in _LAZY:
        raise AttributeError(f"module 'torch_neuronx' has no attribute {name!r}")
    import importlib

    module, attr = _LAZY[name]
    value = importlib.import_module(module)
    return value if attr is None else getattr(value, attr)


if "_torch_neuronx_nki_finder" not in __import__("sys").modules:
    from .nki import finder as _nki_finder  # noqa: F401  (`import nki` where the .pth did not run: python -S)

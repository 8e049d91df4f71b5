"""A stand-in for AWS's NkiCpuSimulator package, written for the NKI Library
yardstick. The library's test harness, in its simulation mode
(`--test-mode simulation`, test/utils/simulation_setup.py), imports
`nki_cpu_simulator.nki` and its submodules, aliases them as `nki`, and calls
`nki.cpu_simulate(kernel)[lnc](**numpy_arrays)`. Here every one of those
modules reads through to torch_neuronx.nki's (a name our NKI lacks is
reported as missing when a kernel reaches it), but `nki.language.dtypes`,
the harness's `nki.dtype` for NumPy test data, which is neuron_dtypes
(NumPy dtypes), and cpu_simulate moves the arrays to `neuron`,
runs the kernel on the device and brings the results back as NumPy arrays.

RUNS records each call for the yardstick's table: the kernel, its LNC, the
seconds on the emulator (the first call, which traces, and a second on
fresh copies of the arguments, which replays the plan as every later call
of those shapes does), and the cost model's estimate."""

import importlib
import os
import sys
import time
import types

import ml_dtypes
import numpy as np
import torch

import torch_neuronx
from torch_neuronx import nki as _nki

SUBMODULES = ("builtin", "compiler", "isa", "isa.constants", "language", "language.dtypes", "tensor", "typing")
RUNS: list = []

# NumPy (ml_dtypes) formats without a NumPy-to-torch conversion: bits moved as
# an integer of the same width, then viewed as the torch dtype.
# IEEE-style float8_e4m3 (test data of the library's fp8 paths) travels as e4m3fn,
# Trainium2's format (nl.float8_e4m3 here): the same bits below 240.
_BITS = {
    np.dtype(ml_dtypes.bfloat16): (np.uint16, torch.bfloat16),
    np.dtype(ml_dtypes.float8_e4m3fn): (np.uint8, torch.float8_e4m3fn),
    np.dtype(ml_dtypes.float8_e4m3): (np.uint8, torch.float8_e4m3fn),
    np.dtype(ml_dtypes.float8_e5m2): (np.uint8, torch.float8_e5m2),
    np.dtype(ml_dtypes.float8_e8m0fnu): (np.uint8, torch.float8_e8m0fnu),
}
_BACK = {
    torch.bfloat16: np.dtype(ml_dtypes.bfloat16),
    torch.float8_e4m3fn: np.dtype(ml_dtypes.float8_e4m3fn),
    torch.float8_e5m2: np.dtype(ml_dtypes.float8_e5m2),
    torch.float8_e8m0fnu: np.dtype(ml_dtypes.float8_e8m0fnu),
}


def to_neuron(value):
    if not isinstance(value, np.ndarray):
        return value
    bits = _BITS.get(value.dtype)
    if bits is not None:
        t = torch.from_numpy(np.ascontiguousarray(value).view(bits[0])).view(bits[1])
    elif value.dtype.fields:  # a packed MX format: its 32-bit words
        t = torch.from_numpy(np.ascontiguousarray(value).view(np.uint32))
    else:
        t = torch.from_numpy(np.ascontiguousarray(value))
    return t.to("neuron")


def to_numpy(value):
    if not isinstance(value, torch.Tensor):
        return value
    t = value.cpu()
    back = _BACK.get(t.dtype)
    if back is not None:
        return t.view({1: torch.uint8, 2: torch.uint16}[t.element_size()]).numpy().view(back)
    return t.numpy()


def _map(out, fn):
    if isinstance(out, (list, tuple)):
        return type(out)(_map(o, fn) for o in out)
    return fn(out)


class _Simulated:
    def __init__(self, kernel):
        self.kernel = kernel if isinstance(kernel, _nki.Kernel) else _nki.jit(kernel)

    def __getitem__(self, lnc):
        return lambda *args, **kwargs: self._run(int(lnc), args, kwargs)

    def __call__(self, *args, **kwargs):
        return self._run(1, args, kwargs)

    def _run(self, lnc, np_args, np_kwargs):
        launch = self.kernel[lnc] if lnc > 1 else self.kernel
        generation = os.environ.get("NKI_NC_VERSION")  # the harness's target, as gen3 / gen4
        if generation:
            os.environ["NEURON_PLATFORM_TARGET_OVERRIDE"] = generation

        def timed():  # fresh device copies each time: a kernel may write its arguments
            args = [to_neuron(a) for a in np_args]
            kwargs = {k: to_neuron(v) for k, v in np_kwargs.items()}
            torch.neuron.synchronize()
            start = time.perf_counter()
            out = launch(*args, **kwargs)
            torch.neuron.synchronize()
            return out, time.perf_counter() - start

        out, first = timed()  # traces the kernel, builds its plan, runs it
        estimate = _nki.last_estimate()
        _, replay = timed()  # the plan again, as every later call of the same shapes runs
        RUNS.append(
            {
                "kernel": self.kernel.__name__,
                "lnc": lnc,
                "seconds": replay,
                "first_seconds": first,
                "estimate_us": estimate.total_us if estimate is not None else None,
                "target": estimate.target if estimate is not None else None,
            }
        )
        return _map(out, to_numpy)


def cpu_simulate(kernel):
    return _Simulated(kernel)


class _Proxy(types.ModuleType):
    """A module of the harness's `nki` that reads through to torch_neuronx.nki's
    module of the same path (none: a name our NKI lacks, reported when looked up)."""

    def __init__(self, name, target):
        super().__init__(name)
        self.__path__ = []
        self._target = target

    def __getattr__(self, attr):
        if attr.startswith("__") or self._target is None:
            raise AttributeError(f"module '{self.__name__}' has no attribute '{attr}' (not in torch_neuronx.nki)")
        return getattr(self._target, attr)


def _target(path):
    if path == ".language.dtypes":  # the harness's `nki.dtype`: NumPy dtypes for its test data
        return importlib.import_module("neuron_dtypes")
    try:
        return importlib.import_module(f"torch_neuronx.nki{path}")
    except ImportError:
        return None


nki = _Proxy(f"{__name__}.nki", _nki)
nki.cpu_simulate = cpu_simulate
sys.modules[nki.__name__] = nki
for _sub in SUBMODULES:
    _parent, _, _leaf = f"{nki.__name__}.{_sub}".rpartition(".")
    _mod = _Proxy(f"{nki.__name__}.{_sub}", _target(f".{_sub}"))
    setattr(sys.modules[_parent], _leaf, _mod)
    sys.modules[_mod.__name__] = _mod
# Modules the harness does not alias but the library's kernels import as
# `nki.<name>` (the harness's `nki` is the proxy above, so the import system
# looks them up by that full name).
for _sub in ("collectives", "lnc"):
    sys.modules[f"nki.{_sub}"] = importlib.import_module(f"torch_neuronx.nki.{_sub}")
    setattr(nki, _sub, sys.modules[f"nki.{_sub}"])
assert torch_neuronx  # registers the neuron device

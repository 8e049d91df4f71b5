"""`nki.jit`: a kernel called with tensors, traced once per signature and
replayed.

`kernel(*args)` and `kernel[grid](*args)` take `neuron` tensors (run on their
device memory, after the work queued on the current stream that produced
them), CPU tensors or NumPy arrays (`nki.simulate`). The signature of a call
is its grid, target, and per argument either (shape, dtype, strides) for a
tensor or the value itself; a new signature traces the kernel (checking
every limit, see trace/state.py), builds a plan (executor/plan.py) and a cost
estimate (cost/); a known one replays the plan (executor/device.py). Outputs
are the `shared_hbm` tensors the kernel returns, allocated per call on the
arguments' device. The top layer of the package with torch_ops.py: it
imports the trace, the cost model and the executor, not the language or the
ISA (kernels call those; the package's __init__ imports them).
"""

from __future__ import annotations

import collections
import functools
import inspect
import itertools
import threading

import torch

from .. import _C
from ..observability import op_tracking as _op_tracking
from .chip import targets
from .cost.schedule import estimate as estimate_cost
from .errors import NKIError
from .executor.device import execute, map_outputs
from .executor.plan import Plan
from .trace import dynamic, syncs
from .trace.access import Access
from .trace.buffers import HBM, Buffer
from .trace.state import Trace, active, current
from .trace.tile import Tile

# Traces (plans, on-chip tensors, estimates) kept per kernel: a harness that
# calls one kernel at hundreds of shapes holds the last MAX_SIGNATURES.
MAX_SIGNATURES = 16
_last = threading.local()
_stats = {"traces": 0, "calls": 0}
run_observers: list = []  # callables(kernel name, Estimate), told of each run on neuron tensors


def last_estimate():
    """The cost estimate of the last kernel call on this thread (None before any)."""
    return getattr(_last, "estimate", None)


def stats() -> dict:
    """Traces and calls since the start (a replay adds a call, not a trace)."""
    return dict(_stats)


def _is_tensor(x) -> bool:
    return isinstance(x, torch.Tensor)


def _is_array(x) -> bool:
    return type(x).__module__ == "numpy" and type(x).__name__ == "ndarray"


def _is_fake(t) -> bool:
    if type(t) is torch.Tensor:
        return t.device.type == "meta"
    from torch._subclasses.fake_tensor import FakeTensor

    return isinstance(t, FakeTensor) or t.device.type == "meta"


def _fake_result(b, tensors):
    """An output of the right shape and dtype under fake tensors (no data moves)."""
    if b.role == "arg" and b.parent is None:
        return tensors[b.index]
    like = tensors[0] if tensors else None
    device = like.device if like is not None else "meta"
    return torch.empty(b.shape, dtype=b.dtype, device=device)


def _grid_tuple(grid) -> tuple:
    """The grid as ints; a dimension of physical cores (nl.nc, nl.spmd_dim) stays itself."""
    if grid is None:
        return ()
    dims = grid if isinstance(grid, (tuple, list)) else (grid,)
    return tuple(g if hasattr(g, "core_of") else int(g) for g in dims)


class Kernel:
    """A function decorated with `@nki.jit`."""

    def __init__(self, fn, platform_target=None, **options):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.platform_target = platform_target  # other options of AWS's nki.jit (mode, ...) change nothing here
        self.plans: collections.OrderedDict = collections.OrderedDict()  # signature -> _Traced, newest last
        self.trace_count = 0
        self._lock = threading.Lock()  # held while tracing
        self._lru_lock = threading.Lock()

    def __getitem__(self, grid):
        return functools.partial(self._call, _grid_tuple(grid))

    def __call__(self, *args, **kwargs):
        return self._call((), *args, **kwargs)

    def __repr__(self):
        return f"<nki.jit kernel {self.__name__}>"

    # ----------------------------------------------------------------
    def _call(self, grid, *args, **kwargs):
        if current() is not None:  # called from inside a kernel being traced: a subroutine of that kernel
            if grid:
                raise NKIError(
                    f"kernel '{self.__name__}' is launched with a grid {list(grid)} from inside another kernel; "
                    f"call it without one: it runs as part of the calling kernel's programs"
                )
            return self.fn(*args, **kwargs)
        numpy_in = any(_is_array(a) for a in itertools.chain(args, kwargs.values()))
        if numpy_in:
            args = [torch.from_numpy(a) if _is_array(a) else a for a in args]
            kwargs = {k: torch.from_numpy(v) if _is_array(v) else v for k, v in kwargs.items()}
        tensors = [t for t in itertools.chain(args, kwargs.values()) if isinstance(t, torch.Tensor)]
        fake = any(_is_fake(t) for t in tensors)
        device = _common_device(self.__name__, [t for t in tensors if not _is_fake(t)] if fake else tensors)
        traced = self.traced(grid, args, kwargs)
        _last.estimate = traced.estimate
        if fake:  # shapes only: fake tensors (torch.compile) or meta
            return map_outputs(traced.outputs, lambda b: _fake_result(b, tensors))
        _stats["calls"] += 1
        start = _C._trace_now_ns() if device is not None and _C._trace_active() else None
        out = execute(traced.plan(), tensors, device, traced.mutated)
        if device is not None:  # neuron (None: CPU tensors, simulated)
            if start is not None:  # a profiler is recording: the kernel with its NKI estimate
                est = traced.estimate
                _C._trace_record(
                    "kernel",
                    f"nki::{self.__name__}",
                    start,
                    _C._trace_now_ns(),
                    device.index or 0,
                    f"NKI kernel for {est.target}",
                    est.dma_bytes,
                    est.total_us,
                    est.bottleneck,
                )
            _op_tracking.record_kernel_run(self.__name__)
            for observe in run_observers:
                observe(self.__name__, traced.estimate)
        if numpy_in:
            out = map_outputs(out, lambda t: t.numpy())
        return out

    def traced(self, grid, args, kwargs=None) -> _Traced:
        """The trace of this call's signature (traced now if it is new)."""
        kwargs = kwargs or {}
        target = targets.resolve_target(self.platform_target)
        cores = tuple(tuple(map(g.core_of, range(g))) if hasattr(g, "core_of") else None for g in grid)
        key = (grid, cores, target, tuple(map(_signature, args)), tuple((k, _signature(v)) for k, v in kwargs.items()))
        with self._lru_lock:
            traced = self.plans.get(key)
            if traced is not None:
                self.plans.move_to_end(key)
        if traced is None:
            with self._lock:
                traced = self.plans.get(key)
                if traced is None:
                    # the trace computes on real (index) tensors, even under fake-tensor or tracing modes
                    from torch.utils._python_dispatch import _disable_current_modes

                    with _disable_current_modes():
                        traced = self._trace(grid, target, args, kwargs)
                    with self._lru_lock:
                        self.plans[key] = traced
                        while len(self.plans) > MAX_SIGNATURES:  # the least recently called one traces again
                            self.plans.popitem(last=False)
        return traced

    def _trace(self, grid, target, args, kwargs) -> Plan:
        tr = Trace(self.__name__, target, grid)
        index = itertools.count()
        with active(tr):

            def bind(a, name):
                if not _is_tensor(a):
                    return a
                buf = Buffer(tr, HBM, a.shape, a.dtype, name, "arg", index=next(index))
                return Tile(Access.whole(buf))

            names = _param_names(self.fn, len(args))
            targs = [bind(a, n) for a, n in zip(args, names)]
            tkwargs = {k: bind(v, k) for k, v in kwargs.items()}
            result = None
            for i, program in enumerate(itertools.product(*(range(g) for g in grid)) if grid else [()]):
                tr.program = program
                tr.shared_next = 0
                try:
                    r = self.fn(*targs, **tkwargs)
                except NKIError as e:
                    if e.kernel is None:  # raised below the kernel's frame: name the kernel and its line
                        raise type(e)(e.detail, kernel=self.__name__, line=tr.line_of(e.__traceback__)) from None
                    raise
                if i == 0:
                    result = r
            dynamic.check_closed(tr)
            tr.check_capacity()
            syncs.check_pairing(tr)
            outputs = map_outputs(result, lambda t: _output_buffer(tr, t))
        self.trace_count += 1
        _stats["traces"] += 1
        return _Traced(tr, outputs, estimate_cost(tr))


class _Traced:
    """One signature of a kernel: its trace, outputs and estimate; the plan is
    built on the first call that runs it (a call on fake tensors only traces)."""

    def __init__(self, trace, outputs, estimate):
        self.trace, self.outputs, self.estimate = trace, outputs, estimate
        # the tensor arguments (by position among the tensors) the kernel writes
        self.mutated = sorted(
            {a.buffer.root().index for ins in trace.instrs for a in ins.writes if a.buffer.root().role == "arg"}
        )
        self._plan = None
        self._lock = threading.Lock()

    def plan(self) -> Plan:
        if self._plan is None:
            with self._lock:
                if self._plan is None:
                    self._plan = Plan(self.trace, self.outputs)
                    self.trace = None
        return self._plan


def _param_names(fn, n):
    try:
        names = [p.name for p in inspect.signature(fn).parameters.values()]
    except (TypeError, ValueError):
        names = []
    return (names + [f"arg{i}" for i in range(len(names), n)])[:n] if n else []


def _signature(a):
    if _is_tensor(a):
        # symbolic sizes (torch.compile with dynamic shapes) specialise: a kernel is traced per shape
        return ("tensor", tuple(int(s) for s in a.shape), a.dtype, tuple(int(s) for s in a.stride()))
    try:
        hash(a)
        return ("value", a)
    except TypeError:
        return ("repr", repr(a))


def _common_device(name, tensors):
    devices = {(t.device.type, t.device.index) for t in tensors}
    if len(devices) > 1:
        raise NKIError(
            f"NKI kernel '{name}' got tensors on different devices {sorted(str(d) for d in devices)}: "
            f"move them all to one neuron device (or all to the CPU for nki.simulate)"
        )
    if not devices:
        return None
    dev_type, index = devices.pop()
    if dev_type not in ("neuron", "cpu"):
        raise NKIError(
            f"NKI kernel '{name}' runs on neuron tensors (or CPU tensors and NumPy arrays, "
            f"simulated), not on {dev_type}"
        )
    return torch.device(dev_type, index) if dev_type == "neuron" else None


def _output_buffer(tr, t):
    if not isinstance(t, Tile):
        raise NKIError(
            f"a kernel returns the HBM tensors it allocated (nl.ndarray(..., buffer=nl.shared_hbm)); "
            f"got {type(t).__name__}",
            kernel=tr.kernel_name,
        )
    buf = t.access.buffer
    if buf.kind.on_chip or not t.access.is_whole():
        raise NKIError(
            f"a kernel can only return whole HBM tensors; {buf.describe()} is not one: nl.store it "
            f"into an nl.ndarray(..., buffer=nl.shared_hbm) and return that",
            kernel=tr.kernel_name,
        )
    return buf


def jit(fn=None, *, platform_target=None, mode=None, **options):
    """`@nki.jit` or `@nki.jit(platform_target="trn2")`."""
    if fn is None:
        return lambda f: Kernel(f, platform_target=platform_target, mode=mode, **options)
    return Kernel(fn, platform_target=platform_target, mode=mode, **options)


def simulate(kernel):
    """`nki.simulate(kernel)(*numpy_or_cpu_args)`: runs a kernel without a device."""
    k = kernel if isinstance(kernel, Kernel) else jit(kernel)

    def run(*args, **kwargs):
        for a in itertools.chain(args, kwargs.values()):
            if _is_tensor(a) and a.device.type != "cpu":
                raise NKIError(f"nki.simulate runs on CPU tensors or NumPy arrays; got a tensor on {a.device}")
        return k(*args, **kwargs)

    return run

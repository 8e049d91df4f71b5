"""NKI kernels as PyTorch operators: `torch_neuronx.nki_op` and
`torch_neuronx.wrap_nki`, with AWS's TorchNeuron names.

`nki_op(name, mutates_args=...)` registers a kernel (or a function calling
kernels) as a `torch.library.custom_op`: schema inferred from the Python
signature (unannotated parameters without defaults are tensors; a default's
type types the others; an unannotated return is one tensor, or nothing when
the op mutates its arguments), the fake
implementation is the kernel itself traced on fake tensors (tracing needs
only shapes), and training adds `op.register_autograd(backward, ...)`.

`wrap_nki(kernel)` returns a caller; `caller[grid](*args)` runs the kernel
through one generic operator, `torch_neuronx::nki_call`, whose string
argument names the kernel, the grid and the non-tensor arguments. Under
`torch.compile` either is one graph node: no graph break, and no recompile
per call.

DTensor inputs run by local shard: the kernel sees each rank's local tensor
and its outputs become DTensors with the first DTensor input's mesh and
placements (the kernel must be shard-local, as elementwise and row-wise
kernels are).
"""

from __future__ import annotations

import functools
import inspect
import threading

import torch

from .errors import NKIError
from .jit import Kernel, _grid_tuple

_lock = threading.Lock()
_kernels: list = []  # wrap_nki registry: id -> kernel
_values: dict = {}  # non-tensor arguments by their key


def _is_dtensor(x) -> bool:
    return type(x).__name__ == "DTensor" and hasattr(x, "to_local")


def _local_shards(args, kwargs):
    """(args, kwargs) with DTensors replaced by their local shards, and a
    function turning outputs back into DTensors like the first DTensor input."""
    first = next((a for a in list(args) + list(kwargs.values()) if _is_dtensor(a)), None)
    if first is None:
        return args, kwargs, None
    from torch.distributed.tensor import DTensor

    mesh, placements = first.device_mesh, first.placements

    def local(a):
        return a.to_local() if _is_dtensor(a) else a

    def wrap(out):
        if isinstance(out, torch.Tensor):
            return DTensor.from_local(out, mesh, placements, run_check=False)
        if isinstance(out, (tuple, list)):
            return type(out)(wrap(o) for o in out)
        return out

    return [local(a) for a in args], {k: local(v) for k, v in kwargs.items()}, wrap


# ---------------------------------------------------------------- nki_op
def _typed_signature(fn, mutates: bool = False) -> inspect.Signature:
    sig = inspect.signature(fn)
    params = []
    for p in sig.parameters.values():
        ann = p.annotation
        if ann is inspect.Parameter.empty:
            if p.default is inspect.Parameter.empty:
                ann = torch.Tensor
            elif p.default is None:
                ann = torch.Tensor | None
            else:
                ann = type(p.default)
        params.append(p.replace(annotation=ann))
    ret = sig.return_annotation
    if ret is inspect.Signature.empty:
        ret = None if mutates else torch.Tensor
    return sig.replace(parameters=params, return_annotation=ret)


class NkiOp:
    """What `nki_op` returns: the registered custom op (every attribute of
    torch.library.CustomOpDef, e.g. `register_autograd`), called with
    DTensor inputs by local shard."""

    def __init__(self, op):
        self._op = op

    def __call__(self, *args, **kwargs):
        args, kwargs, wrap = _local_shards(args, kwargs)
        out = self._op(*args, **kwargs)
        return out if wrap is None else wrap(out)

    def __getattr__(self, name):
        return getattr(self._op, name)


def nki_op(name: str, fn=None, *, mutates_args=(), device_types=None, schema=None):
    """Registers an NKI kernel, or a function that calls kernels, as the custom
    op `name` ("namespace::op"). Use as a decorator or call with `fn`."""

    def register(f):
        py = f.fn if isinstance(f, Kernel) else f

        def impl(*args, **kwargs):
            return f(*args, **kwargs)

        impl.__signature__ = _typed_signature(py, bool(mutates_args))
        impl.__name__ = getattr(py, "__name__", "nki_kernel")
        impl.__annotations__ = {}
        op = torch.library.custom_op(name, impl, mutates_args=mutates_args, device_types=device_types, schema=schema)
        op.register_fake(impl)  # the kernel traced on fake tensors: shapes and dtypes of its outputs
        return NkiOp(op)

    return register if fn is None else register(fn)


# ---------------------------------------------------------------- wrap_nki
def _register_kernel(kernel) -> int:
    with _lock:
        for i, k in enumerate(_kernels):
            if k is kernel:
                return i
        _kernels.append(kernel)
        return len(_kernels) - 1


def _value_key(v) -> str:
    key = f"{type(v).__name__}:{v!r}"
    with _lock:
        _values.setdefault(key, v)
    return key


@torch.library.custom_op("torch_neuronx::nki_call", mutates_args=())
def nki_call(spec: str, inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    """Runs the kernel `spec` names (wrap_nki) on `inputs`; returns its
    outputs as a list (fresh tensors, never an input)."""
    return _run_functional(spec, inputs)


@nki_call.register_fake
def _(spec, inputs):
    return _run_functional(spec, inputs)


def _run_functional(spec, inputs):
    kernel, grid, template = _decode(spec)
    args = _rebuild(template, inputs)
    mutated = kernel.traced(grid, args).mutated
    if mutated:
        raise NKIError(
            f"wrap_nki runs kernels as functions, but '{kernel.__name__}' writes its tensor argument(s) "
            f"{mutated} (by position among its tensors): register it with "
            f"torch_neuronx.nki_op(name, mutates_args=...) so PyTorch knows",
            kernel=kernel.__name__,
        )
    return _as_list(kernel[grid](*args), inputs)


def _as_list(out, inputs):
    outs = list(out) if isinstance(out, (tuple, list)) else ([] if out is None else [out])
    # the op's outputs never alias its inputs: an argument the kernel returns is cloned
    return [o.clone() if any(o is i for i in inputs) else o for o in outs]


def _decode(spec):
    kernel_id, grid, template = spec.split("|", 2)
    kernel = _kernels[int(kernel_id)]
    grid = tuple(int(g) for g in grid.split(",") if g)
    template = [None if t == "T" else _values[t] for t in template.split("\x1f")] if template else []
    return kernel, grid, template


def _rebuild(template, inputs):
    it = iter(inputs)
    return [next(it) if t is None else t for t in template]


@torch._dynamo.assume_constant_result
def _spec(kernel_id: int, grid: tuple, consts: tuple, tensor_positions: tuple) -> str:
    """The string naming a call: kernel, grid, and each argument (a tensor
    slot, or the key of a non-tensor value). Constant under torch.compile."""
    template = "\x1f".join("T" if i in tensor_positions else _value_key(c) for i, c in enumerate(consts))
    return f"{kernel_id}|{','.join(str(g) for g in grid)}|{template}"


class NkiCaller:
    """`wrap_nki(kernel)`: `caller[grid](*args)` or `caller(*args)`."""

    def __init__(self, kernel):
        self.kernel = kernel if isinstance(kernel, Kernel) else Kernel(kernel)
        self.kernel_id = _register_kernel(self.kernel)
        functools.update_wrapper(self, self.kernel.fn)

    def __getitem__(self, grid):
        return functools.partial(self._run, _grid_tuple(grid))

    def __call__(self, *args):
        return self._run((), *args)

    def _run(self, grid, *args):
        args, _, wrap = _local_shards(args, {})
        positions = tuple(i for i, a in enumerate(args) if isinstance(a, torch.Tensor))
        consts = tuple(None if i in positions else a for i, a in enumerate(args))
        tensors = [args[i] for i in positions]
        outs = nki_call(_spec(self.kernel_id, grid, consts, positions), tensors)
        out = outs[0] if len(outs) == 1 else (tuple(outs) if outs else None)
        return out if wrap is None else wrap(out)


def wrap_nki(kernel) -> NkiCaller:
    return NkiCaller(kernel)

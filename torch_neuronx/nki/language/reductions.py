"""`nl` reductions along free axes (sum, prod, max, min, mean, var, all) and
the row-wise `softmax` and `rms_norm`: fp32 on whole tiles, rounded once to
the result's dtype. The partition axis (0) cannot be reduced (free_axes)."""

import math

import torch

from ..chip import dtypes
from ..trace.emit import emit
from ..trace.operands import as_tile, check_on_chip, f32, free_axes
from ..trace.tile import Tile


def _reduction(name, fn):
    def op(x, axis, dtype=None, mask=None, keepdims=False, dst=None, **kwargs):
        x = as_tile(x, f"nl.{name} operand")
        check_on_chip(x, f"nl.{name}")
        axes = free_axes(x, axis, name)
        shape = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
        if not keepdims:
            shape = tuple(s for i, s in enumerate(x.shape) if i not in axes)
        out = dtypes.to_torch(dtype) if dtype is not None else x.dtype

        def compute(a):
            r = fn(f32(a), axes)
            return r if keepdims else r.reshape([s for i, s in enumerate(a.shape) if i not in axes])

        return emit(
            name,
            "vector",
            compute,
            [x],
            shape=shape,
            dtype=out,
            mask=mask,
            dst=dst,
            keep_src_shapes="partition",
            cost={"elements": math.prod(x.shape)},
        )

    op.__name__ = name
    return op


sum = _reduction("sum", lambda a, ax: a.sum(dim=ax, keepdim=True))  # noqa: A001
prod = _reduction(
    "prod",
    lambda a, ax: (
        a.reshape(*a.shape).prod(dim=ax[0], keepdim=True)
        if len(ax) == 1
        else a.flatten(ax[0], ax[-1])
        .prod(dim=ax[0], keepdim=True)
        .reshape([1 if i in ax else s for i, s in enumerate(a.shape)])
    ),
)
max = _reduction("max", lambda a, ax: a.amax(dim=ax, keepdim=True))  # noqa: A001
min = _reduction("min", lambda a, ax: a.amin(dim=ax, keepdim=True))  # noqa: A001
mean = _reduction("mean", lambda a, ax: a.mean(dim=ax, keepdim=True))
var = _reduction("var", lambda a, ax: a.var(dim=ax, keepdim=True, unbiased=False))
all = _reduction(
    "all",
    lambda a, ax: (
        a.bool().all(dim=ax[0], keepdim=True).to(torch.float32)  # noqa: A001
        if len(ax) == 1
        else a.bool().flatten(ax[0], ax[-1]).all(dim=ax[0], keepdim=True).float()
    ),
)


def softmax(x, axis, dtype=None, compute_dtype=None, mask=None, **kwargs) -> Tile:
    x = as_tile(x, "nl.softmax operand")
    check_on_chip(x, "nl.softmax")
    axes = free_axes(x, axis, "softmax")
    out = dtypes.to_torch(dtype) if dtype is not None else x.dtype

    def fn(a):
        a = f32(a)
        e = torch.exp(a - a.amax(dim=axes, keepdim=True))
        return e / e.sum(dim=axes, keepdim=True)

    return emit("softmax", "scalar", fn, [x], dtype=out, mask=mask)


def rms_norm(x, w, axis, n, epsilon=1e-6, dtype=None, compute_dtype=None, mask=None, **kwargs) -> Tile:
    x = as_tile(x, "nl.rms_norm operand")
    check_on_chip(x, "nl.rms_norm")
    axes = free_axes(x, axis, "rms_norm")
    out = dtypes.to_torch(dtype) if dtype is not None else x.dtype

    def fn(a, weight):
        a = f32(a)
        return a * torch.rsqrt(a.square().sum(dim=axes, keepdim=True) / n + epsilon) * f32(weight)

    return emit("rms_norm", "vector", fn, [x, w], dtype=out, mask=mask)

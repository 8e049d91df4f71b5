"""The ALU ops of nki.isa calls, by name: an `op=` argument may be an `nl`
function or a NumPy function (`np.add`, `np.max`, `np.exp`, ...), as AWS's
samples pass them; `binary_fn`, `unary_fn` and `reduce_fn` give the PyTorch
computation of each. A new op is one entry of BINARY, UNARY or REDUCE."""

from __future__ import annotations

import torch

from ..errors import NKIError

BINARY = {
    "add": torch.add,
    "subtract": torch.sub,
    "multiply": torch.mul,
    "divide": torch.div,
    "true_divide": torch.div,
    "maximum": torch.maximum,
    "max": torch.maximum,
    "amax": torch.maximum,
    "minimum": torch.minimum,
    "min": torch.minimum,
    "amin": torch.minimum,
    "power": torch.pow,
    "fmod": torch.fmod,
    "mod": torch.remainder,
    "equal": torch.eq,
    "not_equal": torch.ne,
    "greater": torch.gt,
    "greater_equal": torch.ge,
    "less": torch.lt,
    "less_equal": torch.le,
    "logical_and": torch.logical_and,
    "logical_or": torch.logical_or,
    "logical_xor": torch.logical_xor,
    "bitwise_and": torch.bitwise_and,
    "bitwise_or": torch.bitwise_or,
    "bitwise_xor": torch.bitwise_xor,
    "left_shift": torch.bitwise_left_shift,
    "right_shift": torch.bitwise_right_shift,
    "abs_max": lambda a, b: torch.maximum(torch.abs(a), torch.abs(b)),
    "abs_min": lambda a, b: torch.minimum(torch.abs(a), torch.abs(b)),
}
REDUCE = {
    "add": "sum",
    "sum": "sum",
    "maximum": "amax",
    "max": "amax",
    "amax": "amax",
    "minimum": "amin",
    "min": "amin",
    "amin": "amin",
    "multiply": "prod",
    "prod": "prod",
}
UNARY = {
    "exp": torch.exp,
    "log": torch.log,
    "tanh": torch.tanh,
    "square": torch.square,
    "copy": lambda a: a,
    "identity": lambda a: a,
    "bypass": lambda a: a,
    "sqrt": torch.sqrt,
    "rsqrt": torch.rsqrt,
    "reciprocal": torch.reciprocal,
    "negative": torch.neg,
    "abs": torch.abs,
    "absolute": torch.abs,
    "sign": torch.sign,
    "sin": torch.sin,
    "cos": torch.cos,
    "arctan": torch.atan,
    "relu": torch.relu,
    "sigmoid": torch.sigmoid,
    "erf": torch.erf,
    "invert": torch.bitwise_not,
}


def name_of(op) -> str:
    return getattr(op, "__name__", None) or str(op)


def binary_fn(op, what):
    fn = getattr(op, "torch_fn", None)
    if fn is not None and name_of(op) in BINARY:
        return BINARY[name_of(op)]
    if name_of(op) in BINARY:
        return BINARY[name_of(op)]
    raise NKIError(f"nisa.{what}: {op!r} is not a binary ALU op (nl.add, nl.multiply, nl.maximum, np.add, ...)")


def unary_fn(op, what):
    fn = getattr(op, "torch_fn", None)
    if fn is not None:
        return fn
    if name_of(op) in UNARY:
        return UNARY[name_of(op)]
    raise NKIError(f"nisa.{what}: {op!r} is not an activation function (nl.exp, nl.tanh, nl.copy, np.exp, ...)")


def reduce_fn(op, what):
    name = REDUCE.get(name_of(op))
    if name is None:
        raise NKIError(f"nisa.{what}: {op!r} is not a reduce op (nl.add, nl.max, nl.min, np.add, np.max, ...)")
    if name == "prod":
        return lambda a, axes: (
            a.flatten(axes[0], axes[-1])
            .prod(dim=axes[0], keepdim=True)
            .reshape([1 if i in axes else s for i, s in enumerate(a.shape)])
        )
    return lambda a, axes: getattr(a, name)(dim=axes, keepdim=True)

"""`nl` elementwise ops of one tile: math functions and activations, each
computed in fp32 on whole tiles and rounded once to its dtype (the Scalar
engine's activations; abs, negation, rounding and logical/bitwise not on the
Vector engine). Each op carries its PyTorch function as `torch_fn`, which
nki.isa calls use when the op is passed as `op=`."""

import torch

from ..chip import dtypes
from ..trace.emit import emit
from ..trace.operands import as_tile, check_on_chip, f32


def _unary(name, fn, engine="scalar", direct=False):
    def op(x, dtype=None, mask=None, dst=None, **kwargs):
        x = as_tile(x, f"nl.{name} operand")
        check_on_chip(x, f"nl.{name}")
        out = dtypes.to_torch(dtype) if dtype is not None else x.dtype
        return emit(
            name, engine, lambda a: fn(f32(a)), [x], dtype=out, mask=mask, dst=dst, direct=fn if direct else None
        )

    op.__name__ = name
    op.torch_fn = fn
    return op


def _gelu_tanh(x):
    return torch.nn.functional.gelu(x, approximate="tanh")


def _gelu_dx(x):  # d/dx x*Phi(x) = Phi(x) + x*phi(x)
    return 0.5 * (1 + torch.erf(x * 0.7071067811865476)) + x * torch.exp(-0.5 * x * x) * 0.3989422804014327


def _gelu_sigmoid(x):  # x * sigmoid(1.702 x)
    return x * torch.sigmoid(1.702 * x)


def _gelu_sigmoid_dx(x):
    s = torch.sigmoid(1.702 * x)
    return s + 1.702 * x * s * (1 - s)


def _silu_dx(x):
    s = torch.sigmoid(x)
    return s * (1 + x * (1 - s))


def _erf_dx(x):
    return 1.1283791670955126 * torch.exp(-x * x)


exp = _unary("exp", torch.exp, direct=True)
log = _unary("log", torch.log, direct=True)
sqrt = _unary("sqrt", torch.sqrt, direct=True)
rsqrt = _unary("rsqrt", torch.rsqrt, direct=True)
reciprocal = _unary("reciprocal", torch.reciprocal, direct=True)
abs = _unary("abs", torch.abs, "vector")  # noqa: A001
negative = _unary("negative", torch.neg, "vector")
sign = _unary("sign", torch.sign)
square = _unary("square", torch.square, direct=True)
tanh = _unary("tanh", torch.tanh, direct=True)
sigmoid = _unary("sigmoid", torch.sigmoid, direct=True)
relu = _unary("relu", torch.relu)
gelu = _unary("gelu", torch.nn.functional.gelu)
gelu_apprx_tanh = _unary("gelu_apprx_tanh", _gelu_tanh)
gelu_dx = _unary("gelu_dx", _gelu_dx)
gelu_apprx_sigmoid = _unary("gelu_apprx_sigmoid", _gelu_sigmoid)
gelu_apprx_sigmoid_dx = _unary("gelu_apprx_sigmoid_dx", _gelu_sigmoid_dx)
silu = _unary("silu", torch.nn.functional.silu)
silu_dx = _unary("silu_dx", _silu_dx)
softplus = _unary("softplus", torch.nn.functional.softplus)
mish = _unary("mish", torch.nn.functional.mish)
sin = _unary("sin", torch.sin)
cos = _unary("cos", torch.cos)
tan = _unary("tan", torch.tan)
arctan = _unary("arctan", torch.atan)
erf = _unary("erf", torch.erf)
erf_dx = _unary("erf_dx", _erf_dx)
ceil = _unary("ceil", torch.ceil, "vector")
floor = _unary("floor", torch.floor, "vector")
trunc = _unary("trunc", torch.trunc, "vector")
logical_not = _unary("logical_not", lambda a: torch.logical_not(a).to(torch.float32), "vector")
invert = bitwise_not = _unary("invert", torch.bitwise_not, "vector")
identity = _unary("identity", lambda a: a)

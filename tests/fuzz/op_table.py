"""The operations the program fuzzer (op_programs.py) draws from. Each Op
draws its parameters from hypothesis once, looking at the CPU arguments'
shapes, and returns one closure that both runs apply to their own arguments,
with a label for the failing program's printout. Parameters are drawn a
little outside the valid range at times (a dim past the last, an index past
the end, a k larger than the size), so both devices must raise alike."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from hypothesis import strategies as st


@dataclass(frozen=True)
class Op:
    name: str
    arity: int
    build: Callable  # (data, cpu_args) -> (fn(*args), label)

    def __repr__(self) -> str:  # hypothesis prints the drawn op
        return self.name


def dim_of(data, t: torch.Tensor) -> int:
    n = max(t.dim(), 1)
    return data.draw(st.integers(-n, n), label="dim")  # n itself is out of range


def size_of(t: torch.Tensor, d: int) -> int:
    return t.shape[d] if -t.dim() <= d < t.dim() and t.dim() else 1


def fixed(name: str, arity: int, fn: Callable) -> Op:
    return Op(name, arity, lambda data, args: (fn, name))


UNARY = [
    "neg",
    "abs",
    "sin",
    "exp",
    "sqrt",
    "sigmoid",
    "relu",
    "floor",
    "round",
    "sign",
    "logical_not",
    "bitwise_not",
    "isnan",
    "reciprocal",
    "square",
    "clone",
    "tanh",
    "log1p",
    "frac",
    "angle",
]
BINARY = [
    "add",
    "sub",
    "mul",
    "div",
    "maximum",
    "minimum",
    "eq",
    "lt",
    "ge",
    "pow",
    "remainder",
    "fmod",
    "bitwise_and",
    "bitwise_xor",
    "logical_and",
    "atan2",
    "floor_divide",
    "hypot",
    "copysign",
]
CASTS = [torch.float32, torch.bfloat16, torch.int64, torch.bool, torch.uint8, torch.complex64, torch.float16]


def unary(name):
    return fixed(name, 1, lambda a: getattr(torch, name)(a))


def binary(name):
    return fixed(name, 2, lambda a, b: getattr(torch, name)(a, b))


def cast(data, args):
    dtype = data.draw(st.sampled_from(CASTS), label="dtype")
    return (lambda a: a.to(dtype)), f"to({dtype})"


def with_cpu_scalar(data, args):
    # PyTorch lets a 0-dim CPU tensor join an accelerator tensor's op.
    value = data.draw(st.sampled_from([2, -1, 0, 2.5, float("nan"), True]), label="value")
    name = data.draw(st.sampled_from(["add", "mul", "div", "sub", "maximum", "eq"]), label="op")
    scalar = torch.tensor(value)
    return (lambda a: getattr(torch, name)(a, scalar)), f"{name}(·, cpu tensor({value}))"


def with_python_scalar(data, args):
    value = data.draw(st.sampled_from([3, -2, 0, 0.5, -1.5, float("inf")]), label="value")
    name = data.draw(st.sampled_from(["add", "mul", "div", "pow", "remainder", "clamp_min", "lt"]), label="op")
    return (lambda a: getattr(torch, name)(a, value)), f"{name}(·, {value})"


def reduce(data, args):
    (a,) = args
    name = data.draw(
        st.sampled_from(
            [
                "sum",
                "prod",
                "mean",
                "amax",
                "argmax",
                "cumsum",
                "std",
                "any",
                "all",
                "softmax",
                "logsumexp",
                "max",
                "min",
                "var",
            ]
        ),
        label="reduction",
    )
    whole = data.draw(st.booleans(), label="whole") and name not in ("cumsum", "softmax", "logsumexp")
    if whole:
        return (lambda t: getattr(torch, name)(t)), f"{name}()"
    d = dim_of(data, a)
    keep = data.draw(st.booleans(), label="keepdim")
    if name in ("cumsum", "softmax"):
        return (lambda t: getattr(torch, name)(t, d)), f"{name}(dim={d})"
    return (lambda t: getattr(torch, name)(t, d, keepdim=keep)), f"{name}(dim={d}, keepdim={keep})"


def matmul(data, args):
    name = data.draw(st.sampled_from(["matmul", "mm", "bmm", "outer", "dot", "mv"]), label="op")
    return (lambda a, b: getattr(torch, name)(a, b)), name


def where(data, args):
    return (lambda c, a, b: torch.where(c > 0 if c.dtype != torch.bool else c, a, b)), "where(v>0, ·, ·)"


def view_op(data, args):
    (a,) = args
    kind = data.draw(
        st.sampled_from(
            [
                "slice",
                "transpose",
                "permute",
                "expand",
                "unsqueeze",
                "squeeze",
                "reshape",
                "view",
                "flip",
                "narrow",
                "diagonal",
                "select",
                "t",
                "as_strided",
                "movedim",
                "unfold",
                "real",
            ]
        ),
        label="view",
    )
    d = dim_of(data, a)
    n = size_of(a, d)
    if kind == "slice":
        start, stop = data.draw(st.integers(-n - 1, n + 1), label="start"), data.draw(st.integers(-n - 1, n + 1))
        step = data.draw(st.integers(1, 3), label="step")
        index = (slice(None),) * (d % max(a.dim(), 1)) + (slice(start, stop, step),)
        return (lambda t: t[index]), f"[{index}]"
    if kind in ("transpose", "movedim"):
        e = dim_of(data, a)
        return (lambda t: getattr(t, kind)(d, e)), f"{kind}({d}, {e})"
    if kind == "permute":
        order = data.draw(st.permutations(list(range(a.dim()))), label="order")
        return (lambda t: t.permute(order)), f"permute({order})"
    if kind == "expand":
        shape = data.draw(st.lists(st.integers(-1, 4), min_size=a.dim(), max_size=a.dim() + 1), label="shape")
        return (lambda t: t.expand(shape)), f"expand({shape})"
    if kind in ("unsqueeze", "squeeze", "select", "diagonal", "narrow", "unfold"):
        k = data.draw(st.integers(-1, n + 1), label="k")
        calls = {
            "unsqueeze": lambda t: t.unsqueeze(d),
            "squeeze": lambda t: t.squeeze(d),
            "select": lambda t: t.select(d, k),
            "diagonal": lambda t: t.diagonal(k),
            "narrow": lambda t: t.narrow(d, max(k, 0) if n else 0, min(1, n)),
            "unfold": lambda t: t.unfold(d, max(k, 1), 1),
        }
        return calls[kind], f"{kind}(d={d}, k={k})"
    if kind in ("reshape", "view"):
        shape = [-1] + data.draw(st.lists(st.integers(1, 3), max_size=2), label="shape")
        return (lambda t: getattr(t, kind)(shape)), f"{kind}({shape})"
    if kind == "as_strided":
        return as_strided(data, a)
    calls = {
        "flip": lambda t: t.flip(d),
        "t": lambda t: t.t(),
        "real": lambda t: torch.view_as_real(t) if t.is_complex() else t.real,
    }
    return calls[kind], f"{kind}({d})"


def as_strided(data, a):
    """A view within a's storage (or one element past it, which must raise)."""
    room = a.untyped_storage().nbytes() // max(a.element_size(), 1)
    dims = data.draw(st.integers(0, 3), label="dims")
    sizes = [data.draw(st.integers(0, 3), label="size") for _ in range(dims)]
    strides = [data.draw(st.integers(0, 4), label="stride") for _ in range(dims)]
    span = sum((s - 1) * st_ for s, st_ in zip(sizes, strides)) if all(sizes) else 0
    offset = data.draw(st.integers(0, max(room - span, 0) + 1), label="offset")
    return (lambda t: t.as_strided(sizes, strides, offset)), f"as_strided({sizes}, {strides}, {offset})"


def in_place(data, args):
    a, b = args
    kind = data.draw(
        st.sampled_from(
            [
                "add_",
                "mul_",
                "copy_",
                "fill_",
                "zero_",
                "clamp_",
                "masked_fill_",
                "index_fill_",
                "sub_",
                "div_",
                "abs_",
                "t_add_",
            ]
        ),
        label="in-place",
    )
    if kind in ("add_", "mul_", "copy_", "sub_", "div_"):
        return (lambda x, y: getattr(x, kind)(y)), kind
    if kind == "t_add_":  # writes through a view into its base
        return (lambda x, y: x.t().add_(1) if x.dim() <= 2 else x.select(0, 0).add_(1)), "view.add_(1)"
    if kind == "fill_":
        return (lambda x, y: x.fill_(y) if y.dim() == 0 else x.fill_(3)), "fill_"
    if kind == "clamp_":
        return (lambda x, y: x.clamp_(-1, 2)), "clamp_(-1, 2)"
    if kind == "masked_fill_":
        return (lambda x, y: x.masked_fill_(y > 0 if y.dtype != torch.bool else y, 7)), "masked_fill_(v>0, 7)"
    if kind == "index_fill_":
        d = dim_of(data, a)
        idx = torch.tensor(data.draw(st.lists(st.integers(-1, 4), max_size=3), label="index"), dtype=torch.long)
        return (lambda x, y: x.index_fill_(d, idx.to(x.device), 5)), f"index_fill_({d}, {idx.tolist()}, 5)"
    return (lambda x, y: getattr(x, kind)()), kind


def with_out(data, args):
    a, b, out = args
    name = data.draw(st.sampled_from(["add", "mul", "sum", "cat", "maximum", "neg", "mm"]), label="op")
    calls = {
        "add": lambda x, y, o: torch.add(x, y, out=o),
        "mul": lambda x, y, o: torch.mul(x, y, out=o),
        "sum": lambda x, y, o: torch.sum(x, 0, out=o),
        "cat": lambda x, y, o: torch.cat([x, y], out=o),
        "maximum": lambda x, y, o: torch.maximum(x, y, out=o),
        "neg": lambda x, y, o: torch.neg(x, out=o),
        "mm": lambda x, y, o: torch.mm(x, y, out=o),
    }
    return calls[name], f"{name}(out=)"


def indexing(data, args):
    a, b = args
    kind = data.draw(
        st.sampled_from(
            [
                "index_select",
                "gather",
                "getitem",
                "mask",
                "scatter_",
                "index_put_",
                "take",
                "masked_select",
                "nonzero",
                "cpu_index",
            ]
        ),
        label="indexing",
    )
    d = dim_of(data, a)
    values = data.draw(st.lists(st.integers(-5, 5), max_size=4), label="index")
    idx = torch.tensor(values, dtype=torch.long)
    on = lambda t: idx.to(t.device)  # noqa: E731
    calls = {
        "index_select": lambda x, y: x.index_select(d, on(x)),
        "gather": lambda x, y: x.gather(d, on(x).reshape([-1] + [1] * max(x.dim() - 1, 0))),
        "getitem": lambda x, y: x[on(x)],
        "cpu_index": lambda x, y: x[idx],
        "mask": lambda x, y: x[y > 0 if y.dtype != torch.bool else y],
        "scatter_": lambda x, y: x.scatter_(d, on(x).reshape([-1] + [1] * max(x.dim() - 1, 0)), 1),
        "index_put_": lambda x, y: x.index_put_(
            (on(x),), torch.ones((), dtype=x.dtype, device=x.device), accumulate=True
        ),
        "take": lambda x, y: x.take(on(x)),
        "masked_select": lambda x, y: x.masked_select(y > 0 if y.dtype != torch.bool else y),
        "nonzero": lambda x, y: x.nonzero(),
    }
    return calls[kind], f"{kind}(dim={d}, index={values})"


def join(data, args):
    d = data.draw(st.integers(-2, 2), label="dim")
    name = data.draw(st.sampled_from(["cat", "stack"]), label="op")
    return (lambda a, b: getattr(torch, name)([a, b], d)), f"{name}(dim={d})"


def sort_op(data, args):
    (a,) = args
    d = dim_of(data, a)
    k = data.draw(st.integers(0, 4), label="k")
    name = data.draw(st.sampled_from(["sort", "topk", "argsort", "kthvalue", "unique"]), label="op")
    calls = {
        "sort": lambda t: torch.sort(t, d, stable=True),
        "topk": lambda t: torch.topk(t, k, d),
        "argsort": lambda t: torch.argsort(t, dim=d, stable=True),
        "kthvalue": lambda t: torch.kthvalue(t, k, d),
        "unique": lambda t: torch.unique(t, sorted=True),
    }
    return calls[name], f"{name}(dim={d}, k={k})"


# Hypothesis leans towards the first entries (it shrinks towards them), so
# the operations that touch memory layout come first.
OPS = (
    [
        Op("view", 1, view_op),
        Op("in-place", 2, in_place),
        Op("indexing", 2, indexing),
        Op("out=", 3, with_out),
        Op("reduce", 1, reduce),
        Op("view", 1, view_op),
        Op("in-place", 2, in_place),
        Op("indexing", 2, indexing),
        Op("join", 2, join),
        Op("sort", 1, sort_op),
        Op("matmul", 2, matmul),
        Op("where", 3, where),
        Op("to", 1, cast),
        Op("cpu scalar", 1, with_cpu_scalar),
        Op("python scalar", 1, with_python_scalar),
        Op("view", 1, view_op),
    ]
    + [binary(n) for n in BINARY]
    + [unary(n) for n in UNARY]
)

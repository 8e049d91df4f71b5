"""Tiles as a kernel sees them while it is traced.

A `Tile` is what kernel code holds: a kernel argument, `nl.ndarray(...)`, the
result of `nl.load` or of any operation, or an indexed part of one of those.
It carries an `Access` (access.py) and supports NumPy-like attributes,
indexing, reshaping and operators. The operators (`a + b`, `a @ b`, `t[i] = v`,
`t += v`, `t.T`, ...) record `nki.language` instructions, and this layer does
not import the language: `nki.language` binds their implementations when it
is imported (`bind_operators`), and an operator looks its implementation up
when it is used.
"""

from __future__ import annotations

import math

from ..chip import dtypes
from ..errors import NKIError
from . import state, views
from .access import Access
from .buffers import Buffer

# The operations Tile's operators call, by the nl name of each; `assign` is
# `tile[key] = value` and `inplace` is `tile <op>= value` (called with the op's name).
OPERATORS = (
    "add",
    "subtract",
    "multiply",
    "divide",
    "power",
    "matmul",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "equal",
    "not_equal",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "negative",
    "abs",
    "transpose",
    "broadcast_to",
    "assign",
    "inplace",
)
_bound: dict = {}
_COMPARISONS = ("less", "less_equal", "greater", "greater_equal", "equal", "not_equal")


def bind_operators(table: dict) -> None:
    """Gives Tile's operators their implementations (`nki.language` calls this
    once, at import, with one function for each name of OPERATORS)."""
    unknown = sorted(set(table) - set(OPERATORS))
    if unknown:
        raise ValueError(f"not tile operators: {unknown}")
    _bound.update(table)


def _operator(name: str):
    fn = _bound.get(name)
    if fn is None:
        raise NKIError(f"the tile operator {name!r} has no implementation: import torch_neuronx.nki (nki.language)")
    return fn


class Tile:
    """A tile or tensor inside a traced kernel."""

    __slots__ = ("access", "producer", "used", "updated", "__weakref__")
    __array_priority__ = 1000

    def __init__(self, access: Access, producer=None):
        self.access = access
        self.producer = producer  # the Instr that made this temporary, until something reads it
        self.used = False
        self.updated = None  # the instruction of `t[...] += x`: Python's store-back `t[...] = t` right after is no copy
        access.buffer.tiles += 1

    def __del__(self):
        # the kernel can no longer name this buffer once no tile refers to it: drop its trace-time state
        buf = self.access.buffer
        buf.tiles -= 1
        if buf.tiles == 0 and buf.children == 0:
            buf.stamps = buf.poison = None

    # NumPy-like attributes
    @property
    def shape(self):
        return self.access.shape

    @property
    def dtype(self):
        """The nl dtype (nl.bfloat16, ...), as AWS's NKI gives it: it compares
        equal to the PyTorch dtype the buffer holds."""
        return dtypes.of_torch(self.access.buffer.dtype)

    @property
    def ndim(self):
        return len(self.access.shape)

    @property
    def buffer(self):
        return self.access.buffer.kind

    @property
    def name(self):
        return self.access.buffer.name

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return f"Tile({list(self.shape)}, {self.dtype}, {self.buffer.name})"

    def __getitem__(self, key):
        buf = self.access.buffer  # (tiles with block dimensions before the partitions index as NumPy does)
        on_chip = buf.kind.on_chip and buf.par_axis == 0 and self.ndim >= 2
        plain = on_chip and all(isinstance(k, (int, slice)) or k is Ellipsis for k in _as_tuple(key))
        if plain and isinstance(_as_tuple(key)[0], int):  # the partition dimension stays, of size 1
            i = _as_tuple(key)[0]
            i = i + self.shape[0] if i < 0 else i
            key = (slice(i, i + 1),) + _as_tuple(key)[1:]
        acc = self.access[key]
        if plain and len(acc.shape) < 2:  # an on-chip view stays 2-D: the last free dimension kept at 1
            shape = tuple(acc.shape) + (1,) * (2 - len(acc.shape))
            arrays = [a.reshape(tuple(a.shape) + (1,) * (len(shape) - a.dim())) for a in acc.arrays]
            acc = Access(acc.buffer, arrays, shape)
        return Tile(acc)

    def __setitem__(self, key, value):
        _operator("assign")(self[key], value)

    def __bool__(self):
        """A tensor is a present object (AWS's kernels test optional tensors with
        `if params.expert_index:`); a comparison's result holds values known only
        when the kernel runs, so `if a > b:` is refused."""
        if self.producer is not None and self.producer.name in _COMPARISONS:
            raise NKIError(
                "a tile's values are not known while a kernel is traced: Python `if`/`while` on a "
                "comparison of tiles is not allowed (use nl.where or a mask)"
            )
        return True

    def __iter__(self):
        raise NKIError("iterating over a tile is not supported: index it with nl.arange / slices")

    @property
    def size(self):
        return math.prod(self.shape)

    def reshape(self, *shape):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        if self.access.is_whole() and -1 not in shape:
            return _reshape(self, shape)
        return views.reshape_view(self, shape)

    # the view methods of AWS's NkiTensor (views.py)
    strides = property(views.strides)
    offset = property(views.offset)
    get_pattern = views.get_pattern
    ap = views.ap
    slice = views.slice_
    select = views.select
    vector_select = views.vector_select
    is_indirect = views.is_indirect
    permute = views.permute
    broadcast = views.broadcast
    expand_dim = views.expand_dim
    squeeze_dim = views.squeeze_dim
    reshape_dim = views.reshape_dim
    flatten_dims = views.flatten_dims

    def view(self, dtype):
        raise NKIError("reinterpreting a tile as another dtype (tile.view) is not supported yet")

    def broadcast_to(self, shape):
        return _operator("broadcast_to")(self, shape)

    def __array__(self, *a, **k):
        raise NKIError("a traced tile cannot become a NumPy array inside a kernel")

    def _op(name, reverse=False):  # noqa: N805
        def method(self, other):
            fn = _operator(name)
            return fn(other, self) if reverse else fn(self, other)

        return method

    __add__ = _op("add")
    __radd__ = _op("add", True)
    __sub__ = _op("subtract")
    __rsub__ = _op("subtract", True)
    __mul__ = _op("multiply")
    __rmul__ = _op("multiply", True)
    __truediv__ = _op("divide")
    __rtruediv__ = _op("divide", True)
    __pow__ = _op("power")
    __rpow__ = _op("power", True)
    __matmul__ = _op("matmul")
    __lt__ = _op("less")
    __le__ = _op("less_equal")
    __gt__ = _op("greater")
    __ge__ = _op("greater_equal")
    _equal, _not_equal = _op("equal"), _op("not_equal")

    def __eq__(self, other):  # `t == None` (a kernel's argument check) is Python's; with a tile or number, nl.equal
        return False if other is None else self._equal(other)

    def __ne__(self, other):
        return True if other is None else self._not_equal(other)

    __and__ = _op("bitwise_and")
    __or__ = _op("bitwise_or")
    __xor__ = _op("bitwise_xor")
    __hash__ = object.__hash__

    def __neg__(self):
        return _operator("negative")(self)

    def __abs__(self):
        return _operator("abs")(self)

    def _iop(name):  # noqa: N805
        def method(self, other):
            _operator("inplace")(name, self, other)
            return self

        return method

    __iadd__ = _iop("add")
    __isub__ = _iop("subtract")
    __imul__ = _iop("multiply")
    __itruediv__ = _iop("divide")
    del _op, _iop

    @property
    def T(self):  # noqa: N802
        return _operator("transpose")(self)


def _reshape(t: Tile, shape) -> Tile:
    """`tensor.reshape(shape)`: a view of a whole tensor or tile (an aliasing buffer)."""
    shape = tuple(int(s) for s in shape)
    buf = t.access.buffer
    if math.prod(shape) != math.prod(t.shape):
        raise state.require("reshape").error(f"cannot reshape {list(t.shape)} to {list(shape)}")
    tr = state.require("reshape")
    if not t.access.is_whole():
        raise tr.error("only whole tensors and tiles can be reshaped (tensor.reshape(...)), not an indexed part")
    if buf.kind.on_chip and shape[0] != t.shape[0]:
        raise tr.error(f"reshaping an on-chip tile keeps its partition dimension: {list(t.shape)} to {list(shape)}")
    role = "alias" if buf.kind.on_chip else buf.role
    alias = Buffer(tr, buf.kind, shape, buf.dtype, f"{buf.name}.reshape", role, index=buf.index, parent=buf)
    return Tile(Access.whole(alias))


def _as_tuple(key) -> tuple:
    return key if isinstance(key, tuple) else (key,)

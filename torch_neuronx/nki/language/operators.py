"""The operators of tiles (`a + b`, `a @ b`, `-a`, `t[i] = v`, `t += v`, `t.T`,
`t.broadcast_to(...)`) are `nki.language` functions: `bind()` hands them to
the trace layer (trace/tile.py), which cannot import the language. The
package's `__init__` calls it once, when `nki.language` is imported."""

from ..trace import tile
from .assign import assign, inplace
from .elementwise import (
    add,
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    divide,
    equal,
    greater,
    greater_equal,
    less,
    less_equal,
    multiply,
    not_equal,
    power,
    subtract,
)
from .movement import broadcast_to
from .tensor_engine import matmul, transpose
from .unary import abs, negative


def bind() -> None:
    tile.bind_operators(
        {
            "add": add,
            "subtract": subtract,
            "multiply": multiply,
            "divide": divide,
            "power": power,
            "matmul": matmul,
            "less": less,
            "less_equal": less_equal,
            "greater": greater,
            "greater_equal": greater_equal,
            "equal": equal,
            "not_equal": not_equal,
            "bitwise_and": bitwise_and,
            "bitwise_or": bitwise_or,
            "bitwise_xor": bitwise_xor,
            "negative": negative,
            "abs": abs,
            "transpose": transpose,
            "broadcast_to": broadcast_to,
            "assign": assign,
            "inplace": inplace,
        }
    )

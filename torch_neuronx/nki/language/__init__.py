"""`nki.language` (`nl`): memory, indexing, loops, arithmetic, activations,
reductions and matmul on tiles, as AWS's NKI documents them.

Each function records instructions on the current trace (trace/emit.py) and
returns a tile; nothing computes while tracing. Engines follow AWS's
assignment: DMA for load/store, the Tensor engine for matmul/transpose, the
Scalar engine for activations, the Vector engine for two-input elementwise
math and reductions, GpSimd for iota.

One file per concept: memory.py (buffers, allocation), movement.py (load,
store, copy), assign.py (`t[...] = v`, `t += v`), control.py (program ids,
loops), elementwise.py, unary.py, reductions.py, tensor_engine.py (matmul,
transpose), debug.py, rng.py, limits.py (`nl.tile_size`); the index
expressions, dtypes and par_dim come from the layers below. A new name is one
function in its file, exported here. This layer may use nki.isa's
instructions (isa/); importing it binds the operators of tiles (operators.py).
"""

from ..chip.dtypes import (
    bfloat16,
    bfp16,
    bool_,
    float8_e4m3,
    float8_e5m2,
    float16,
    float32,
    fp32,
    int8,
    int16,
    int32,
    int64,
    tfloat32,
    uint8,
    uint16,
    uint32,
)
from ..errors import NKIError
from ..trace.access import Access
from ..trace.alloc import new_buffer, new_tile, par_dim
from ..trace.buffers import HBM, PRIVATE_HBM, PSUM, SBUF, SHARED_HBM
from ..trace.emit import emit
from ..trace.indexing import IndexExpr, arange, ds, mgrid
from ..trace.operands import as_tile, dma_cost, f32, is_scalar, partition_aligned
from ..trace.tile import Tile
from . import operators as _operators
from .control import affine_range, num_programs, program_id, program_ndim, sequential_range, static_range
from .debug import device_print
from .elementwise import (
    add,
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    divide,
    equal,
    fmod,
    greater,
    greater_equal,
    left_shift,
    less,
    less_equal,
    logical_and,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    multiply,
    not_equal,
    power,
    right_shift,
    subtract,
    where,
)
from .limits import tile_size
from .memory import (
    empty_like,
    full,
    full_like,
    hbm,
    ndarray,
    ones,
    ones_like,
    private_hbm,
    psum,
    sbuf,
    shared_hbm,
    tile,
    zeros,
    zeros_like,
)
from .movement import broadcast_to, copy, load, load_transpose2d, store
from .reductions import all, max, mean, min, prod, rms_norm, softmax, sum, var
from .rng import dropout, rand, random_seed
from .tensor_engine import matmul, transpose
from .unary import (
    abs,
    arctan,
    bitwise_not,
    ceil,
    cos,
    erf,
    exp,
    floor,
    gelu,
    gelu_apprx_tanh,
    identity,
    invert,
    log,
    logical_not,
    mish,
    negative,
    reciprocal,
    relu,
    rsqrt,
    sigmoid,
    sign,
    silu,
    sin,
    softplus,
    sqrt,
    square,
    tan,
    tanh,
    trunc,
)

_operators.bind()

__all__ = [
    # dtypes and their limits
    "bfloat16",
    "bfp16",
    "bool_",
    "float16",
    "float32",
    "float8_e4m3",
    "float8_e5m2",
    "fp32",
    "int16",
    "int32",
    "int64",
    "int8",
    "tfloat32",
    "uint16",
    "uint32",
    "uint8",
    # memory and allocation
    "empty_like",
    "full",
    "full_like",
    "hbm",
    "ndarray",
    "ones",
    "ones_like",
    "par_dim",
    "private_hbm",
    "psum",
    "sbuf",
    "shared_hbm",
    "tile",
    "tile_size",
    "zeros",
    "zeros_like",
    # indexing
    "arange",
    "ds",
    "mgrid",
    # programs and loops
    "affine_range",
    "num_programs",
    "program_id",
    "program_ndim",
    "sequential_range",
    "static_range",
    # data movement
    "broadcast_to",
    "copy",
    "load",
    "load_transpose2d",
    "store",
    # elementwise, two operands
    "add",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "divide",
    "equal",
    "fmod",
    "greater",
    "greater_equal",
    "left_shift",
    "less",
    "less_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "maximum",
    "minimum",
    "multiply",
    "not_equal",
    "power",
    "right_shift",
    "subtract",
    "where",
    # elementwise, one operand
    "abs",
    "arctan",
    "bitwise_not",
    "ceil",
    "cos",
    "erf",
    "exp",
    "floor",
    "gelu",
    "gelu_apprx_tanh",
    "identity",
    "invert",
    "log",
    "logical_not",
    "mish",
    "negative",
    "reciprocal",
    "relu",
    "rsqrt",
    "sigmoid",
    "sign",
    "silu",
    "sin",
    "softplus",
    "sqrt",
    "square",
    "tan",
    "tanh",
    "trunc",
    # reductions
    "all",
    "max",
    "mean",
    "min",
    "prod",
    "rms_norm",
    "softmax",
    "sum",
    "var",
    # Tensor engine
    "matmul",
    "transpose",
    # debugging, RNG (refused)
    "device_print",
    "dropout",
    "rand",
    "random_seed",
    # names of the trace layer that nl has always shown
    "Access",
    "HBM",
    "IndexExpr",
    "NKIError",
    "PRIVATE_HBM",
    "PSUM",
    "SBUF",
    "SHARED_HBM",
    "Tile",
    "as_tile",
    "dma_cost",
    "emit",
    "f32",
    "is_scalar",
    "new_buffer",
    "new_tile",
    "partition_aligned",
]

"""`nki.isa` (`nisa`): one instruction per engine, in both of AWS's styles.

The tutorials' (NKI 0.1) style returns a new tile: `t = nisa.activation(op=nl.exp, data=x)`,
`psum += nisa.nc_matmul(a, b)`. The newer style (NKI 0.2+) writes an explicit
destination given first: `nisa.activation(dst, op=nl.exp, data=x)`,
`nisa.nc_matmul(dst, a, b)`. A call is in the newer style when `dst=` is passed
or its first positional argument is a tile where the older style expects an
op, shape or expression (calls.py). Ops (`op=`, `op0=`, ...) may be `nl`
functions or the NumPy functions AWS's samples pass (`np.add`, `np.max`,
`np.exp`, ...; ops.py).

One file per engine (tensor.py, scalar.py, vector.py and reductions.py,
gpsimd.py, dma.py; fill.py for memset, selection.py for the Vector engine's
selections by value or predicate, lnc.py for the two cores of an LNC=2 launch
meeting): a new instruction is one function in
the file of its engine, exported here, with its cost in cost/instructions.py.
This layer records through trace/ and never imports `nki.language`. An
instruction of AWS's API that the emulator lacks (NOT_YET) imports, so a
kernel module that names it loads, and raises NKIUnsupported when called;
any other name is an AttributeError.
"""

from ..chip.dtypes import fp32
from ..errors import NKIUnsupported, not_yet
from ..trace.buffers import PSUM, SBUF
from ..trace.dynamic import VirtualRegister
from ..trace.emit import emit
from ..trace.operands import as_tile, f32
from ..trace.tile import Tile
from . import constants
from .dma import dma_compute, dma_copy, dma_transpose
from .enums import (
    NkiValidationError,
    dge_mode,
    dma_engine,
    engine,
    get_nc_sub_version,
    get_nc_version,
    gpsimd_engine,
    matmul_perf_mode,
    nc_version,
    oob_mode,
    reduce_cmd,
    scalar_engine,
    tensor_engine,
    unknown_engine,
    vector_engine,
)
from .fill import memset
from .gpsimd import affine_select, iota, local_gather, nc_n_gather, nonzero_with_count, tensor_partition_reduce
from .lnc import core_barrier, sendrecv
from .reductions import bn_aggr, bn_stats, max8, tensor_reduce
from .registers import register_alloc, register_load, register_move, register_store
from .scalar import activation, activation_reduce, exponential
from .selection import nc_find_index8, nc_match_replace8, range_select, select_reduce, tensor_copy_predicated
from .tensor import nc_matmul, nc_matmul_mx, nc_transpose
from .vector import (
    nc_stream_shuffle,
    quantize_mx,
    reciprocal,
    scalar_tensor_tensor,
    tensor_copy,
    tensor_scalar,
    tensor_scalar_reduce,
    tensor_tensor,
    tensor_tensor_scan,
)

__all__ = [
    # instructions
    "activation",
    "activation_reduce",
    "affine_select",
    "bn_aggr",
    "bn_stats",
    "core_barrier",
    "dma_compute",
    "dma_copy",
    "dma_transpose",
    "exponential",
    "iota",
    "local_gather",
    "max8",
    "memset",
    "nc_find_index8",
    "nc_match_replace8",
    "nc_matmul",
    "nc_matmul_mx",
    "nc_n_gather",
    "nc_stream_shuffle",
    "nc_transpose",
    "nonzero_with_count",
    "quantize_mx",
    "range_select",
    "reciprocal",
    "register_alloc",
    "register_load",
    "register_move",
    "register_store",
    "scalar_tensor_tensor",
    "select_reduce",
    "sendrecv",
    "tensor_copy",
    "tensor_copy_predicated",
    "tensor_partition_reduce",
    "tensor_reduce",
    "tensor_scalar",
    "tensor_scalar_reduce",
    "tensor_tensor",
    "tensor_tensor_scan",
    # enums and constants
    "constants",
    "dge_mode",
    "dma_engine",
    "engine",
    "fp32",
    "get_nc_sub_version",
    "get_nc_version",
    "gpsimd_engine",
    "matmul_perf_mode",
    "nc_version",
    "oob_mode",
    "reduce_cmd",
    "scalar_engine",
    "tensor_engine",
    "unknown_engine",
    "vector_engine",
    "NkiValidationError",
    "VirtualRegister",
    # names of the trace layer that nisa has always shown
    "NKIUnsupported",
    "PSUM",
    "SBUF",
    "Tile",
    "as_tile",
    "emit",
    "f32",
]


# AWS's instructions the emulator does not run yet.
NOT_YET = frozenset(
    """activate2 dropout
    rand2 rand_get_state rand_set_state rng sequence_bounds set_rng_seed
    tensor_scalar_cumulative topk""".split()
)


def __getattr__(name):
    if name in NOT_YET:
        return not_yet(f"nki.isa.{name}")
    raise AttributeError(f"module 'nki.isa' has no attribute '{name}' (AWS's nki.isa has no such name either)")

"""`nl.matmul` and `nl.transpose`: the Tensor engine, contracting on the
partition axis into fp32 PSUM (the instruction is nki.isa's,
`isa/tensor.py`); the cost model times a transpose as a matmul with the identity."""

from ..chip import dtypes
from ..isa.tensor import matmul_instruction
from ..trace import state
from ..trace.emit import emit
from ..trace.operands import as_tile, check_on_chip
from ..trace.tile import Tile


def matmul(x, y, transpose_x=False, mask=None, **kwargs) -> Tile:
    """x @ y (x.T @ y with transpose_x=True, the Tensor engine's native form:
    contraction on the partition axis). The result is an fp32 PSUM tile."""
    x = as_tile(x, "nl.matmul x")
    y = as_tile(y, "nl.matmul y")
    if not transpose_x:
        x = transpose(x)
    return matmul_instruction(x, y, "matmul", mask=mask)


def _transpose_step(rd, wr, accumulate):
    src, out = rd[0], wr[0]
    return lambda env: out.put(env, src.get(env).t())


def transpose(x, dtype=None, mask=None, **kwargs) -> Tile:
    x = as_tile(x, "nl.transpose operand")
    check_on_chip(x, "nl.transpose")
    tr = state.require("nl.transpose")
    if x.ndim != 2:
        raise tr.error(f"nl.transpose takes a 2-D tile, got {list(x.shape)}")
    p, f = x.shape
    if f > tr.limits.pmax:
        raise tr.error(
            f"nl.transpose: free size {f} of {list(x.shape)} becomes the partition dimension, over {tr.limits.pmax}"
        )
    out = dtypes.to_torch(dtype) if dtype is not None else x.dtype
    return emit(
        "transpose",
        "tensor",
        None,
        [x],
        shape=(f, p),
        dtype=out,
        make_step=_transpose_step,
        keep_src_shapes=True,
        poison_rule=lambda ps: ps[0].t() | (ps[1] if len(ps) > 1 else False),
        mask=mask,
        cost={"k": p, "m": p, "n": f, "in_dtype": x.dtype},
    )

"""Recording one instruction: operands, masks, hardware checks and the
runtime step, shared by `nki.language` and `nki.isa`.

Every tile operation goes through `emit`: it resolves scalars and tiles,
applies the mask (a rectangular mask narrows every operand; any other is
kept and merged at run time), checks the engine's limits, allocates the
destination when the caller did not give one, and records an `Instr` whose
step computes on whole tiles. Floating-point math runs in fp32 and rounds
once to the destination's dtype, as the engines do.
"""

from __future__ import annotations

import math

import torch

from ..chip import dtypes
from . import state, views
from .access import Access
from .alloc import new_tile
from .buffers import SBUF, Instr
from .indexing import IndexExpr, broadcast_shapes
from .operands import fp32_scalar, is_scalar, partition_aligned
from .tile import Tile


def _mask_sources(tr, name, m, srcs, src_acc):
    out = []
    for a in src_acc:
        if isinstance(a, Access):
            try:
                mm = m.expand(a.shape)
            except RuntimeError:
                out.append(a)
                continue
            box, rect = mask_box(mm, a.shape)
            if box is None or not rect:
                raise tr.error(f"{name}: a mask on a source's indices must select a rectangle")
            out.append(a.restrict(box))
        else:
            out.append(a)
    return srcs, out


def mask_box(mask: torch.Tensor, shape):
    """(box, rectangular): the bounding box of a mask's true elements."""
    m = mask.expand(shape)
    box = []
    for k in range(len(shape)):
        other = tuple(i for i in range(len(shape)) if i != k)
        along = m.any(dim=other) if other else m
        nz = torch.nonzero(along).flatten()
        if nz.numel() == 0:
            return None, True
        box.append(slice(int(nz[0]), int(nz[-1]) + 1))
    rect = bool(m[tuple(box)].all())
    return box, rect


def _check_onchip_partitions(tr, acc: Access, what: str):
    if acc.buffer.kind.on_chip and acc.shape and acc.shape[0] > tr.limits.pmax:
        raise tr.error(
            f"{what}: partition dimension {acc.shape[0]} of {acc.buffer.describe()} exceeds {tr.limits.pmax}"
        )


def emit(
    name: str,
    engine: str,
    step_fn,
    srcs: list,
    *,
    dst=None,
    shape=None,
    dtype=None,
    kind=SBUF,
    mask=None,
    accumulate=False,
    cost=None,
    make_step=None,
    keep_src_shapes=False,
    poison_rule=None,
    direct=None,
    carried=False,
    oob_skip=False,
    sync=None,
) -> Tile:
    """Records `dst = step_fn(*srcs)` (or `dst += ...` when accumulate) and
    returns the destination tile. `srcs` may hold tiles and scalars; scalars
    are bound into the computation. `shape` defaults to the broadcast of the
    tile operands' shapes. `carried`: a source is dst itself, read as an
    accumulator (`dst = dst + x`), which affine_range iterations may carry.
    `oob_skip`: an indirect operand's elements outside its tensor are
    dropped (writes) or leave the destination's element as it was (reads)."""
    tr = state.require(f"nl/nisa.{name}")
    rank = max([s.ndim for s in srcs if isinstance(s, Tile)] + [dst.ndim if dst is not None else 0])
    srcs = [partition_aligned(s, rank) if isinstance(s, Tile) else s for s in srcs]
    tiles = [s for s in srcs if isinstance(s, Tile)]
    for s in srcs:
        if not isinstance(s, Tile) and not is_scalar(s) and not isinstance(s, torch.Tensor):
            raise tr.error(f"{name}: operand {s!r} ({type(s).__name__}) is neither a tile nor a scalar")
    if shape is None:
        if dst is not None:
            shape = dst.shape
        else:
            try:
                shape = broadcast_shapes(*(t.shape for t in tiles)) if tiles else ()
            except RuntimeError:
                raise tr.error(f"{name}: operand shapes {[list(t.shape) for t in tiles]} do not broadcast") from None
    shape = tuple(shape)
    if dst is not None and not keep_src_shapes:
        srcs = [_as_dst_shape(s, shape) if isinstance(s, Tile) else s for s in srcs]
        tiles = [s for s in srcs if isinstance(s, Tile)]
    for t in tiles:
        t.used = True
    src_acc = [s.access if isinstance(s, Tile) else s for s in srcs]
    box = None
    m = None
    if mask is not None:
        m = mask.t if isinstance(mask, IndexExpr) else torch.as_tensor(mask)
        if m.dtype != torch.bool:
            raise tr.error(f"{name}: mask must be a comparison of index expressions, e.g. (i_p < n)")
        while m.ndim > len(shape) and m.shape[-1] == 1:  # a row mask (i_p < n) on a reduced, rank-1 result
            m = m.squeeze(-1)
        try:
            m = m.expand(shape)
        except RuntimeError:  # a predicate on a source's indices (bn_stats over a tail): narrow that source
            srcs, src_acc = _mask_sources(tr, name, m, srcs, src_acc)
            m = None
    if m is not None:
        box, rect = mask_box(m, shape)
        if box is None:  # nothing selected: the instruction does nothing
            return dst if dst is not None else new_tile(shape, dtype or torch.float32, kind)
        if rect:
            m = None
        else:
            m = m[tuple(box)]
    # destination
    fresh = dst is None
    if fresh:
        if dtype is None:
            dtype = _result_dtype(tiles)
        dst = new_tile(shape, dtype, kind)
    dst_acc = dst.access
    if box is not None:
        if keep_src_shapes == "partition":  # reductions: the partitions narrow, the reduced axes stay
            src_acc = [
                a.restrict([box[0]] + [slice(0, s) for s in a.shape[1:]])
                if isinstance(a, Access) and a.shape and a.shape[0] == shape[0]
                else a
                for a in src_acc
            ]
        elif not keep_src_shapes:
            src_acc = [a.restrict(box) if isinstance(a, Access) else a for a in src_acc]
        dst_acc = dst_acc.restrict(box)
        if m is not None:  # not a rectangle: the step merges under the mask
            dst_acc = dst_acc.masked(m)
            if not keep_src_shapes:
                src_acc = [a.masked(m) if isinstance(a, Access) and a.shape == dst_acc.shape else a for a in src_acc]
    for a in src_acc:
        if isinstance(a, Access):
            a.check_bounds(f"{name} reads")
            _check_onchip_partitions(tr, a, name)
    dst_acc.check_bounds(f"{name} writes")
    _check_onchip_partitions(tr, dst_acc, name)
    reads = [a for a in src_acc if isinstance(a, Access)]
    if accumulate:
        reads = reads + [dst_acc]
    positions = [i for i, a in enumerate(src_acc) if isinstance(a, Access)]
    consts = [None if isinstance(a, Access) else fp32_scalar(a) if isinstance(a, float) else a for a in src_acc]
    make = make_step or _make_elementwise(step_fn, positions, consts, direct)
    c = dict(cost or {})
    if box is not None and math.prod(shape):  # a mask narrows the work: counts given for the whole tile shrink
        kept = math.prod(b.stop - b.start for b in box) / math.prod(shape)
        for key in ("elements", "bytes"):
            if key in c:
                c[key] = int(c[key] * kept)
    c.setdefault("shape", dst_acc.shape)
    # partitions of the instruction: a whole block-dimension buffer spreads over its par_dim, a tile over its first axis
    c.setdefault(
        "partitions", dst_acc.buffer.partitions if dst_acc.identity else (dst_acc.shape[0] if dst_acc.shape else 1)
    )
    c.setdefault("dtype", dst_acc.buffer.dtype)
    c.setdefault("src_dtypes", [a.buffer.dtype for a in reads])
    index_reads = list({id(a.indirect): a.indirect.index for a in reads + [dst_acc] if a.indirect is not None}.values())
    instr = Instr(
        name,
        engine,
        reads,
        [dst_acc],
        make,
        tr.line(),
        c,
        accumulate=accumulate,
        carried=carried,
        box=box if fresh else None,
        wmask=m if fresh else None,
        index_reads=index_reads,
        oob_skip=oob_skip,
        sync=sync,
    )
    if direct is not None and box is None:  # executor/fuse.py may batch repeats of this exact elementwise op
        instr.op_key = (name, direct, tuple(repr(c) for c in consts))
    tr.record(instr, poison_rule)
    if fresh:
        dst.producer = instr
    return dst


def _as_dst_shape(t: Tile, shape) -> Tile:
    """An operand in the destination's shape where its shape does not
    broadcast to it but it holds as many elements per partition: the engines
    pair operands element by element in each partition's order (AWS's
    kernels pass a [P, A, B] view beside a [P, A * B] destination)."""
    if tuple(t.shape) == shape or not shape or not t.shape or t.shape[0] != shape[0]:
        return t
    if math.prod(t.shape) != math.prod(shape):
        return t
    try:
        if tuple(broadcast_shapes(t.shape, shape)) == shape:
            return t
    except RuntimeError:
        pass
    return views.reshape_view(t, list(shape))


def _result_dtype(tiles):
    if not tiles:
        return torch.float32
    d = tiles[0].dtype
    for t in tiles[1:]:
        d = dtypes.promote(d, t.dtype)
    return d


_DIRECT_DTYPES = (torch.float32, torch.bfloat16, torch.float16)


def _make_elementwise(fn, positions, consts, direct=None):
    """The runtime step of an instruction computing fn(*operands). `direct`
    (a PyTorch op taking out=) writes the destination in one call when every
    tile operand already has the destination's dtype: PyTorch's CPU kernels
    compute bf16/fp16 in fp32 and round once, as fn does."""
    n = len(consts)

    def make(rd, wr, accumulate):
        out = wr[0]
        if accumulate:
            rd = rd[:-1]  # the destination, read by the accumulation itself
        if (
            direct is not None
            and not accumulate
            and positions
            and positions[0] == 0
            and out.affine is not None
            and out.mask is None
            and out.dtype in _DIRECT_DTYPES
            and out.repeats is None
            and all(r.dtype == out.dtype for r in rd)
            and not any(r.root == out.root and (r.affine != out.affine or r.shape != out.shape) for r in rd)
        ):  # out= refuses a destination that partly overlaps an input: those compute, then copy
            return _direct_step(direct, positions, consts, rd, out)

        def args(env):
            vals = list(consts)
            for p, r in zip(positions, rd):
                vals[p] = r.get(env)
            return vals

        if n == 1 and positions == [0]:
            only = rd[0]
            if accumulate:
                return lambda env: out.acc(env, fn(only.get(env)))
            return lambda env: out.put(env, fn(only.get(env)))
        if accumulate:
            return lambda env: out.acc(env, fn(*args(env)))
        return lambda env: out.put(env, fn(*args(env)))

    return make


def _direct_step(direct, positions, consts, rd, out):
    if len(rd) == 2 and positions == [0, 1]:
        a, b = rd
        return lambda env: direct(a.get(env), b.get(env), out=out.view(env))
    if len(rd) == 1 and len(consts) == 2:
        a, c = rd[0], consts[1]
        return lambda env: direct(a.get(env), c, out=out.view(env))
    if len(rd) == 1 and len(consts) == 1:
        a = rd[0]
        return lambda env: direct(a.get(env), out=out.view(env))

    def run(env):
        vals = list(consts)
        for p, r in zip(positions, rd):
            vals[p] = r.get(env)
        direct(*vals, out=out.view(env))

    return run

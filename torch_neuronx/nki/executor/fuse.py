"""Plan-time rewrites that make a traced kernel cheaper to replay on the host
without changing what it computes. The trace and its checks and estimate
are untouched: these only change how the plan moves bytes on the CPU.

  - Store forwarding: a tile written once by an instruction and read only by
    the store (or dma_copy) that moves it, whole and unmasked, to HBM: the
    instruction writes the HBM tensor directly and the store disappears.
  - Load forwarding: a tile written once, whole, by a load from HBM (same
    dtype, unmasked, affine) whose source is not written while the tile
    lives: the tile is a view of the HBM tensor, the load binds it.
    Instructions reading the whole tile read the HBM view instead, and a load
    nothing reads any more disappears.
  - Matmul chains: consecutive matmuls accumulating into one PSUM tile whose
    operands are consecutive partition (K) blocks of the same HBM tensors
    become one matmul over the whole K range (fp32 accumulation either way;
    the sum's order differs within fp32 rounding).
  - Repeats: consecutive identical elementwise instructions (the same PyTorch
    op, as grid instances and unrolled loop iterations produce) whose
    operands are HBM blocks a constant stride apart become one instruction
    over a batched view with a leading dimension.
"""

from __future__ import annotations

from .operand import Operand

_LOADS = ("load", "dma_copy", "load_transpose2d")
_STORES = ("store", "dma_copy")
MATMULS = _MATMULS = ("matmul", "nc_matmul")


def _plain(acc) -> bool:
    return acc.mask is None and acc.affine() is not None


def _uses(instrs):
    writes, reads = {}, {}
    for i, ins in enumerate(instrs):
        for a in ins.writes:
            writes.setdefault(a.buffer.root().id, []).append(i)
        for a in ins.reads + ins.index_reads:
            reads.setdefault(a.buffer.root().id, []).append(i)
    return writes, reads


def _touches(instrs, lo, hi, buf_id, writes_only=True) -> bool:
    for ins in instrs[lo + 1 : hi]:
        accs = ins.writes if writes_only else ins.writes + ins.reads + ins.index_reads
        if any(a.buffer.root().id == buf_id for a in accs):
            return True
    return False


def forward_stores(instrs):
    writes, reads = _uses(instrs)
    drop = set()
    for i, ins in enumerate(instrs):
        if ins.name not in _STORES or ins.accumulate or len(ins.reads) != 1:
            continue
        src, dst = ins.reads[0], ins.writes[0]
        buf = src.buffer
        if (
            buf.role != "onchip"
            or buf.children
            or not buf.kind.on_chip
            or dst.buffer.kind.on_chip
            or not src.is_whole()
            or not _plain(dst)
            or dst.buffer.dtype != buf.dtype
            or writes.get(buf.id, []) == []
            or len(writes[buf.id]) != 1
            or reads.get(buf.id) != [i]
        ):
            continue
        p = writes[buf.id][0]
        prod = instrs[p]
        if (
            prod.accumulate
            or prod.wmask is not None
            or len(prod.writes) != 1
            or not prod.writes[0].is_whole()
            or tuple(dst.shape) != tuple(buf.shape)
            or _touches(instrs, p, i, dst.buffer.root().id, False)
        ):
            continue
        prod.writes = [dst]
        prod.est_start = max(prod.est_start, ins.est_start)  # it now does the store's write: order it as the store
        drop.add(i)
    return [ins for i, ins in enumerate(instrs) if i not in drop]


def forward_loads(instrs) -> set:
    """Marks loads whose tile can be a view of HBM; returns the tile buffers' ids."""
    writes, reads = _uses(instrs)
    forwarded = set()
    for i, ins in enumerate(instrs):
        if ins.name not in _LOADS or ins.accumulate or len(ins.reads) != 1:
            continue
        src, dst = ins.reads[0], ins.writes[0]
        buf = dst.buffer
        if (
            buf.role != "onchip"
            or buf.children
            or src.buffer.kind.on_chip
            or not _plain(src)
            or not dst.is_whole()
            or src.buffer.dtype != buf.dtype
            or writes.get(buf.id) != [i]
            or tuple(src.shape) != tuple(buf.shape)
        ):
            continue
        last = max(reads.get(buf.id, [i]))
        if _touches(instrs, i, last + 1, src.buffer.root().id):
            continue
        ins.forward = True
        forwarded.add(buf.id)
    return forwarded


def bind_step(rd, wr, accumulate):
    src, bid = rd[0], wr[0].id

    def run(env):
        env[bid] = src.get(env)

    return run


def substitute_forwarded(instrs, forwarded: set):
    """Reads of a whole forwarded tile read its HBM source; loads left
    without readers are dropped."""
    sources = {ins.writes[0].buffer.id: ins.reads[0] for ins in instrs if getattr(ins, "forward", False)}
    for ins in instrs:
        if getattr(ins, "forward", False):
            continue
        ins.reads = [
            sources[a.buffer.id]
            if a.buffer.id in sources and a.is_whole() and tuple(a.shape) == tuple(sources[a.buffer.id].shape)
            else a
            for a in ins.reads
        ]
    _, reads = _uses(instrs)
    dead = {b for b in forwarded if not reads.get(b)}
    forwarded -= dead
    return [ins for ins in instrs if not (getattr(ins, "forward", False) and ins.writes[0].buffer.id in dead)]


def _hbm_plain(acc) -> bool:
    return not acc.buffer.kind.on_chip and _plain(acc)


def _step_over(instrs, i):
    """The index of the next instruction after i that is not a bind."""
    j = i + 1
    while j < len(instrs) and getattr(instrs[j], "forward", False):
        j += 1
    return j


def merge_matmul_chains(instrs):
    """Merged instructions carry `operands`: (stationary, moving) Operands over HBM."""
    out = []
    i, n = 0, len(instrs)
    while i < n:
        ins = instrs[i]
        blocks = ins.reads[:2] if ins.name in _MATMULS and all(_hbm_plain(a) for a in ins.reads[:2]) else None
        if blocks is None:
            out.append(ins)
            i += 1
            continue
        chain = [blocks]
        j, binds = _step_over(instrs, i), []
        while j < n:
            nxt = instrs[j]
            if not (
                nxt.name in _MATMULS
                and nxt.accumulate
                and nxt.writes[0].buffer is ins.writes[0].buffer
                and nxt.writes[0].affine() == ins.writes[0].affine()
                and all(_hbm_plain(a) for a in nxt.reads[:2])
                and _continues(chain, nxt.reads[:2])
            ):
                break
            chain.append(nxt.reads[:2])
            binds += instrs[i + 1 : j]
            i, j = j, _step_over(instrs, j)
        if len(chain) == 1:
            out.append(ins)
            i = i + 1
            continue
        out += binds
        ins.operands = [_stack_k([c[t] for c in chain]) for t in (0, 1)]
        out.append(ins)
        i += 1
    return out


def _continues(chain, blocks) -> bool:
    for t in (0, 1):
        first, prev, cur = chain[0][t], chain[-1][t], blocks[t]
        if cur.buffer is not first.buffer or cur.shape[1:] != first.shape[1:]:
            return False
        (po, pc), (co, cc) = prev.affine(), cur.affine()
        if pc != cc or any(c - p != row[0] * prev.shape[0] for c, p, row in zip(co, po, pc)):
            return False
    return True


def _stack_k(blocks):
    first = blocks[0]
    offsets, coeffs = first.affine()
    return Operand.affine_view(
        first.buffer.id,
        first.buffer.dtype,
        (sum(b.shape[0] for b in blocks),) + tuple(first.shape[1:]),
        offsets,
        coeffs,
    )


def _repeat_key(ins):
    key = getattr(ins, "op_key", None)
    if key is None or ins.accumulate or len(ins.writes) != 1 or getattr(ins, "operands", None) is not None:
        return None
    if not all(_hbm_plain(a) for a in ins.reads + ins.writes):
        return None
    return key, tuple(tuple(a.shape) for a in ins.reads + ins.writes)


def merge_repeats(instrs):
    """Batches runs of identical elementwise instructions on HBM blocks with a
    constant offset step; merged instructions carry `operands` (reads, writes)."""
    out = []
    i, n = 0, len(instrs)
    while i < n:
        ins = instrs[i]
        key = _repeat_key(ins)
        if key is None:
            out.append(ins)
            i += 1
            continue
        accs = ins.reads + ins.writes
        run, deltas = [ins], None
        j = i + 1
        while j < n and _repeat_key(instrs[j]) == key:
            cur = instrs[j].reads + instrs[j].writes
            step = [[c - p for c, p in zip(b.affine()[0], a.affine()[0])] for a, b in zip(accs, cur)]
            if any(b.affine()[1] != a.affine()[1] for a, b in zip(accs, cur)) or (
                deltas is not None and step != deltas
            ):
                break
            prev = run[-1].reads + run[-1].writes
            if deltas is None and any(
                b.affine()[0] != [o + d for o, d in zip(a.affine()[0], dd)] for a, b, dd in zip(prev, cur, step)
            ):
                break
            if any(_overlaps(w, r) for w in instrs[j].writes for x in run for r in x.reads):
                break
            deltas = step
            run.append(instrs[j])
            j += 1
        if len(run) == 1:
            out.append(ins)
            i += 1
            continue
        ops = [
            Operand.affine_view(
                a.buffer.id,
                a.buffer.dtype,
                (len(run),) + tuple(a.shape),
                a.affine()[0],
                [[d] + row for d, row in zip(dd, a.affine()[1])],
            )
            for a, dd in zip(accs, deltas)
        ]
        ins.operands = (ops[: len(ins.reads)], ops[len(ins.reads) :])
        out.append(ins)
        i = j
    return out


def _overlaps(w, r) -> bool:
    return w.buffer.root() is r.buffer.root()


def optimize(instrs, forward: bool = True):
    """(instructions to run, ids of forwarded tile buffers); `forward=False` forwards no tile."""
    instrs = list(instrs)
    forwarded: set = set()
    if forward:
        instrs = forward_stores(instrs)
        forwarded = forward_loads(instrs)
        instrs = substitute_forwarded(instrs, forwarded)
    instrs = merge_matmul_chains(instrs)
    instrs = merge_repeats(instrs)  # one level: the innermost run of a grid or loop nest
    return instrs, forwarded

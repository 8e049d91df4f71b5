"""Issues one drawn Step (collective_steps.py) on one device of a process
group that has both backends ("cpu:gloo,neuron:neuron"): CPU tensors go to
gloo, neuron tensors to the neuron backend. Returns the call's work (async
steps) and what its result is compared on: each buffer whole (the tensors sit
at a storage offset between sentinels, which must survive), and for a buffer
whose content PyTorch leaves unspecified (a non-root rank's reduce) only the
sentinels."""

import torch
import torch.distributed as dist
from collective_steps import Step, values

SENTINEL = 5  # outside every drawn value range: an overrun shows


class Placed:
    """Tensors placed at the step's offset inside sentinel-filled buffers on `device`."""

    def __init__(self, step: Step, device: str):
        self.step, self.device, self.buffers = step, device, []

    def put(self, x: torch.Tensor, only_sentinels: bool = False) -> torch.Tensor:
        off = self.step.offset
        buf = torch.full((off + x.numel() + 2,), SENTINEL, dtype=x.dtype)
        buf[off : off + x.numel()] = x
        buf = buf.to(self.device)
        self.buffers.append((buf, (off, off + x.numel()) if only_sentinels else None))
        return buf[off : off + x.numel()]

    def empty(self, n: int, dtype=None) -> torch.Tensor:
        return self.put(
            torch.full((n,), 2 if (dtype or self.step.dtype) != torch.bool else 0, dtype=dtype or self.step.dtype)
        )

    def compared(self) -> list[torch.Tensor]:
        out = []
        for buf, hole in self.buffers:
            out.append(buf if hole is None else torch.cat([buf[: hole[0]], buf[hole[1] :]]))
        return out


def _op(name: str):
    return getattr(dist.ReduceOp, name)


def issue(step: Step, device: str, rank: int, group) -> tuple[object, Placed]:
    """Makes `step`'s call on `device` as global rank `rank` (a member of its group)."""
    s, p, m, me = step, Placed(step, device), len(step.members), step.members.index(rank)
    inp = lambda n=s.n, salt=0: values(s, rank, n, salt)  # noqa: E731
    a = dict(group=group, async_op=s.async_op)
    if s.kind == "all_reduce":
        return dist.all_reduce(p.put(inp()), op=_op(s.op), **a), p
    if s.kind == "broadcast":
        return dist.broadcast(p.put(inp()), src=s.root, **a), p
    if s.kind == "reduce":
        return dist.reduce(p.put(inp(), only_sentinels=rank != s.root), dst=s.root, op=_op(s.op), **a), p
    if s.kind == "all_gather":
        return dist.all_gather([p.empty(s.n) for _ in range(m)], p.put(inp()), **a), p
    if s.kind == "all_gather_into_tensor":
        return dist.all_gather_into_tensor(p.empty(s.n * m), p.put(inp()), **a), p
    if s.kind == "reduce_scatter":
        chunks = [p.put(inp(salt=j)) for j in range(m)]
        return dist.reduce_scatter(p.empty(s.n), chunks, op=_op(s.op), **a), p
    if s.kind == "reduce_scatter_tensor":
        return dist.reduce_scatter_tensor(p.empty(s.n), p.put(inp(s.n * m)), op=_op(s.op), **a), p
    if s.kind == "all_to_all_single":
        sent, got = s.splits[me], [s.splits[i][me] for i in range(m)]
        return dist.all_to_all_single(
            p.empty(sum(got)), p.put(inp(sum(sent))), output_split_sizes=got, input_split_sizes=sent, **a
        ), p
    if s.kind == "all_to_all":
        outs = [p.empty(s.splits[i][me]) for i in range(m)]
        return dist.all_to_all(outs, [p.put(inp(s.splits[me][j], salt=j)) for j in range(m)], **a), p
    if s.kind == "gather":
        outs = [p.empty(s.n) for _ in range(m)] if rank == s.root else None
        return dist.gather(p.put(inp()), outs, dst=s.root, **a), p
    if s.kind == "scatter":
        ins = [p.put(inp(salt=j)) for j in range(m)] if rank == s.root else None
        return dist.scatter(p.empty(s.n), ins, src=s.root, **a), p
    if s.kind == "send_recv":
        if rank == s.root:
            t = p.put(inp())
            return (dist.isend(t, s.peer, group=group) if s.async_op else dist.send(t, s.peer, group=group)), p
        if rank == s.peer:
            t = p.empty(s.n)
            return (dist.irecv(t, s.root, group=group) if s.async_op else dist.recv(t, s.root, group=group)), p
        return None, p
    if s.kind == "barrier":
        work = group._get_backend(torch.device(device)).barrier(dist.BarrierOptions())  # this backend's own
        if not s.async_op:
            work.wait()
            work = None
        return work, p
    if s.kind == "all_reduce_coalesced":
        ts = [p.put(inp(k, salt=j)) for j, k in enumerate(s.sizes)]
        return dist.all_reduce_coalesced(ts, op=_op(s.op), **a), p
    raise AssertionError(f"unknown step kind {s.kind}")


def issue_bad(step: Step, device: str, rank: int, group) -> None:
    """Makes one call both backends must refuse (collective_steps.BAD_CALLS)."""
    s, p, m = step, Placed(step, device), len(step.members)
    if s.bad == "gather_into_wrong_size":
        dist.all_gather_into_tensor(p.empty(s.n * m + 1), p.put(values(s, rank, s.n)), group=group)
    elif s.bad == "scatter_tensor_wrong_size":
        dist.reduce_scatter_tensor(p.empty(s.n + 1), p.put(values(s, rank, s.n * m)), group=group)
    elif s.bad == "bitwise_op_on_floats":
        dist.all_reduce(p.put(values(s, rank, s.n).float()), op=dist.ReduceOp.BXOR, group=group)
    elif s.bad == "mixed_dtypes":
        out_dtype = torch.float64 if s.dtype != torch.float64 else torch.float32
        dist.all_gather_into_tensor(p.empty(s.n * m, out_dtype), p.put(values(s, rank, s.n)), group=group)
    elif s.bad == "root_outside_group":
        outside = next(r for r in range(dist.get_world_size()) if r not in s.members)
        dist.broadcast(p.put(values(s, rank, s.n)), src=outside, group=group)
    else:
        raise AssertionError(f"unknown bad call {s.bad}")

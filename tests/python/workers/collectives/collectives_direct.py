"""Collectives that read the peers' buffers in place (csrc/distributed/
DirectCollectives.cpp) against the slot form and a reference each rank
computes itself (test_distributed_collectives.py): every (op, reduce op,
dtype) on random data past the 64 KiB eager buffer, bitwise equal to the slot
form; in-place all-gather (FSDP2's); a rank whose buffer cannot be read in
place (an in-place reduce-scatter's) sends every rank to the slot form, still correct."""

import torch
import torch.distributed as dist
from helpers.rank import RANK, WORLD, init

import torch_neuronx

init()
torch.neuron.set_device(RANK % torch.neuron.device_count())
N = 40_000  # elements per rank: 80-160 KiB, past the eager buffer


def inputs(dtype, n):
    """Every rank's input (the same generator everywhere), this rank's on neuron."""
    g = torch.Generator().manual_seed(n)
    if dtype.is_floating_point:
        all_ = [torch.randn(n, generator=g).to(dtype) for _ in range(WORLD)]
    else:
        all_ = [torch.randint(-50, 50, (n,), generator=g, dtype=dtype) for _ in range(WORLD)]
    return all_, all_[RANK].to("neuron")


def both_forms(fn):
    """fn() with the direct form, then with the slot form (every rank alike)."""
    out = []
    for direct in (True, False):
        dist.barrier()
        torch_neuronx._C._set_direct_collectives(direct)
        out.append(fn().cpu())
    torch_neuronx._C._set_direct_collectives(True)
    return out


checked = 0
for dtype in (torch.float32, torch.bfloat16, torch.int32):
    all_, _ = inputs(dtype, N)
    ops = [dist.ReduceOp.SUM, dist.ReduceOp.MAX, dist.ReduceOp.MIN, dist.ReduceOp.PRODUCT]
    if dtype.is_floating_point:
        ops.append(dist.ReduceOp.AVG)
    for op in ops:

        def allreduce():
            x = all_[RANK].to("neuron")
            dist.all_reduce(x, op=op)
            return x

        direct, slots = both_forms(allreduce)
        assert torch.equal(direct, slots), (dtype, op, "allreduce")
        if op in (dist.ReduceOp.MAX, dist.ReduceOp.MIN) or not dtype.is_floating_point or dtype == torch.float32:
            ref = {
                dist.ReduceOp.SUM: lambda: torch.stack(all_).sum(0, dtype=torch.float64),
                dist.ReduceOp.MAX: lambda: torch.stack(all_).amax(0),
                dist.ReduceOp.MIN: lambda: torch.stack(all_).amin(0),
                dist.ReduceOp.PRODUCT: lambda: torch.stack(all_).to(torch.float64).prod(0),
                dist.ReduceOp.AVG: lambda: torch.stack(all_).to(torch.float64).mean(0),
            }[op]()
            torch.testing.assert_close(direct.to(torch.float64), ref.to(torch.float64), rtol=1e-4, atol=1e-3)

        def reduce_scatter():
            out = torch.empty(N // WORLD, dtype=dtype, device="neuron")
            dist.reduce_scatter_tensor(out, all_[RANK][: N // WORLD * WORLD].to("neuron"), op=op)
            return out

        if op != dist.ReduceOp.PRODUCT:
            direct, slots = both_forms(reduce_scatter)
            assert torch.equal(direct, slots), (dtype, op, "reduce_scatter")
        checked += 1

    def all_gather():
        out = torch.empty(N * WORLD, dtype=dtype, device="neuron")
        dist.all_gather_into_tensor(out, all_[RANK].to("neuron"))
        return out

    def all_gather_in_place():
        out = torch.zeros(N * WORLD, dtype=dtype, device="neuron")
        mine = out[RANK * N : (RANK + 1) * N]
        mine.copy_(all_[RANK])
        dist.all_gather_into_tensor(out, mine)
        return out

    for fn in (all_gather, all_gather_in_place):
        direct, slots = both_forms(fn)
        assert torch.equal(direct, slots) and torch.equal(direct, torch.cat(all_)), (dtype, fn.__name__)

# The direct form did run: this rank mapped its peers' allocations.
backend = dist.distributed_c10d._get_default_group()._get_backend(torch.device("neuron"))
mapped = torch_neuronx._C._process_group_peer_mappings(backend)
assert mapped >= WORLD - 1, mapped

# One rank reduces in place (its output is its part of its input), which it
# publishes as not shareable: every rank takes the slot form, still right.
all_, _ = inputs(torch.float32, N)
part = N // WORLD
inp = all_[RANK][: part * WORLD].to("neuron")
out = inp[RANK * part : (RANK + 1) * part] if RANK == WORLD - 1 else torch.empty(part, device="neuron")
dist.reduce_scatter_tensor(out, inp)
ref = torch.stack([a[: part * WORLD] for a in all_]).sum(0)[RANK * part : (RANK + 1) * part]
torch.testing.assert_close(out.cpu(), ref)
dist.destroy_process_group()
print(f"direct collectives ok ({checked} reduce checks, {mapped} peer allocations mapped)")

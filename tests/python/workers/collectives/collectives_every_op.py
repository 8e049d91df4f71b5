"""Every collective x dtype x reduce op against a reference each rank computes
locally from every rank's (deterministic) inputs; the bytes went through shared
memory only (test_distributed_collectives.py)."""

import torch
import torch.distributed as dist
from helpers.collective_data import DTYPES, data
from helpers.rank import RANK, WORLD, init

init()
torch.neuron.synchronize()
assert torch.neuron.current_device() == RANK % torch.neuron.device_count()  # neuron:LOCAL_RANK
OPS = {
    "SUM": dist.ReduceOp.SUM,
    "PRODUCT": dist.ReduceOp.PRODUCT,
    "MIN": dist.ReduceOp.MIN,
    "MAX": dist.ReduceOp.MAX,
    "AVG": dist.ReduceOp.AVG,
    "BAND": dist.ReduceOp.BAND,
    "BOR": dist.ReduceOp.BOR,
    "BXOR": dist.ReduceOp.BXOR,
}


def reference(op, xs):
    acc = xs[0].clone()
    for x in xs[1:]:
        if op in ("SUM", "AVG"):
            acc = (
                (acc | x)
                if acc.dtype == torch.bool
                else (acc.float() + x.float()).to(acc.dtype)
                if acc.dtype in (torch.bfloat16, torch.float16)
                else acc + x
            )
        elif op == "PRODUCT":
            acc = (
                (acc & x)
                if acc.dtype == torch.bool
                else (acc.float() * x.float()).to(acc.dtype)
                if acc.dtype in (torch.bfloat16, torch.float16)
                else acc * x
            )
        elif op == "MIN":
            acc = torch.minimum(acc, x)
        elif op == "MAX":
            acc = torch.maximum(acc, x)
        elif op == "BAND":
            acc = acc & x
        elif op == "BOR":
            acc = acc | x
        elif op == "BXOR":
            acc = acc ^ x
    if op == "AVG":
        acc = (acc.float() / WORLD).to(acc.dtype) if acc.dtype != torch.float64 else acc / WORLD
    return acc


checked = 0
# One element; a small tensor (every rank's data published with its signature:
# one meeting, EagerCollectives.h); just over the 64 KiB eager buffer for
# 4-byte types (the chunked form), under it for 1- and 2-byte types; more than
# one 4 MiB chunk.
for n in (1, 1000, (64 << 10) // 4 + 5, (5 << 20) // 4 + 3):
    for dtype in DTYPES:
        xs = [data(r, dtype, n) for r in range(WORLD)]
        for name, op in OPS.items():
            floating = dtype.is_floating_point
            if name in ("BAND", "BOR", "BXOR") and floating or name == "AVG" and not floating:
                continue
            t = xs[RANK].to("neuron")
            dist.all_reduce(t, op=op)
            assert torch.equal(t.cpu(), reference(name, xs)), (n, dtype, name)
            checked += 1
        out = torch.empty(WORLD * n, dtype=dtype, device="neuron")
        dist.all_gather_into_tensor(out, xs[RANK].to("neuron"))
        assert torch.equal(out.cpu(), torch.cat(xs)), (n, dtype, "all_gather_into_tensor")
        outs = [torch.empty(n, dtype=dtype, device="neuron") for _ in range(WORLD)]
        dist.all_gather(outs, xs[RANK].to("neuron"))
        assert all(torch.equal(o.cpu(), x) for o, x in zip(outs, xs)), (n, dtype, "all_gather")
        b = xs[RANK].to("neuron")
        dist.broadcast(b, src=WORLD - 1)
        assert torch.equal(b.cpu(), xs[WORLD - 1]), (n, dtype, "broadcast")
        if dtype != torch.bool and n < 10000:
            big = [data(r, dtype, WORLD * n) for r in range(WORLD)]
            rs = torch.empty(n, dtype=dtype, device="neuron")
            dist.reduce_scatter_tensor(rs, big[RANK].to("neuron"))
            assert torch.equal(rs.cpu(), reference("SUM", big)[RANK * n : (RANK + 1) * n]), (
                n,
                dtype,
                "reduce_scatter_tensor",
            )
            rl = torch.empty(n, dtype=dtype, device="neuron")
            dist.reduce_scatter(rl, [c.to("neuron") for c in big[RANK].chunk(WORLD)])
            assert torch.equal(rl.cpu(), reference("SUM", big)[RANK * n : (RANK + 1) * n]), (n, dtype, "reduce_scatter")
        checked += 4
w = dist.all_reduce(torch.ones(8, device="neuron"), async_op=True)
w.wait()
assert w.is_completed() and w.get_future().done()
pre = torch.ones(4, device="neuron")
dist.all_reduce(pre, op=dist._make_nccl_premul_sum(0.5))
assert torch.equal(pre.cpu(), torch.full((4,), 0.5 * WORLD))
dist.barrier()
import torch_neuronx._distributed as nd

assert nd.shm_bytes() > 0 and nd.tcp_bytes() == 0  # one host: shared memory only
print("checked", checked)
dist.destroy_process_group()

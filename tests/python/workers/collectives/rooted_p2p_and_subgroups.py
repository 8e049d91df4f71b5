"""Rooted collectives, all-to-all, the coalesced forms, send / recv and
subgroups against local references (test_distributed_rooted_p2p.py)."""

import torch
import torch.distributed as dist
from helpers.collective_data import DTYPES, data
from helpers.rank import RANK, WORLD, init

init(device_id=torch.device("neuron", RANK % torch.neuron.device_count()))  # bound: split_group needs it


def total(xs, op):
    acc = xs[0].clone()
    for x in xs[1:]:
        if op == "MAX":
            acc = torch.maximum(acc, x)
        elif acc.dtype == torch.bool:
            acc = acc | x
        elif acc.dtype in (torch.bfloat16, torch.float16):
            acc = (acc.float() + x.float()).to(acc.dtype)
        else:
            acc = acc + x
    return acc


checked = 0
for n in (1, 1000, (5 << 20) // 4 + 3):  # more than one 4 MiB slot at the largest
    for dtype in DTYPES:
        xs = [data(r, dtype, n) for r in range(WORLD)]
        root = (n + 1) % WORLD
        for op_name, op in (("SUM", dist.ReduceOp.SUM), ("MAX", dist.ReduceOp.MAX)):
            t = xs[RANK].to("neuron")
            dist.reduce(t, dst=root, op=op)
            expect = total(xs, op_name) if RANK == root else xs[RANK]  # non-roots keep their data
            assert torch.equal(t.cpu(), expect), (n, dtype, "reduce", op_name)
        outs = [torch.empty(n, dtype=dtype, device="neuron") for _ in range(WORLD)] if RANK == root else None
        dist.gather(xs[RANK].to("neuron"), outs, dst=root)
        if RANK == root:
            assert all(torch.equal(o.cpu(), x) for o, x in zip(outs, xs)), (n, dtype, "gather")
        parts = [data(r, dtype, n, salt=1) for r in range(WORLD)]
        got = torch.empty(n, dtype=dtype, device="neuron")
        dist.scatter(got, [p.to("neuron") for p in parts] if RANK == root else None, src=root)
        assert torch.equal(got.cpu(), parts[RANK]), (n, dtype, "scatter")
        # all_to_all_single, equal splits: rank s's block d goes to rank d.
        blocks = {(s, d): data(s, dtype, n, salt=10 + d) for s in range(WORLD) for d in range(WORLD)}
        out = torch.empty(WORLD * n, dtype=dtype, device="neuron")
        dist.all_to_all_single(out, torch.cat([blocks[RANK, d] for d in range(WORLD)]).to("neuron"))
        assert torch.equal(out.cpu(), torch.cat([blocks[s, RANK] for s in range(WORLD)])), (n, dtype, "a2a")
        checked += 5

# Uneven splits: rank s sends s + d + 1 rows of width 3 to rank d (and 0 rows to itself).
rows = lambda s, d: 0 if s == d else s + d + 1
block = lambda s, d: torch.full((rows(s, d), 3), 100 * s + d, dtype=torch.float32)
inp = torch.cat([block(RANK, d) for d in range(WORLD)]).to("neuron")
out = torch.empty(sum(rows(s, RANK) for s in range(WORLD)), 3, device="neuron")
dist.all_to_all_single(
    out,
    inp,
    output_split_sizes=[rows(s, RANK) for s in range(WORLD)],
    input_split_sizes=[rows(RANK, d) for d in range(WORLD)],
)
assert torch.equal(out.cpu(), torch.cat([block(s, RANK) for s in range(WORLD)]))
outs = [torch.empty(rows(s, RANK), 3, device="neuron") for s in range(WORLD)]
dist.all_to_all(outs, [block(RANK, d).to("neuron") for d in range(WORLD)])
assert all(torch.equal(o.cpu(), block(s, RANK)) for s, o in enumerate(outs))
checked += 2

# The coalescing manager takes the coalesced fast paths.
from torch.distributed.distributed_c10d import _coalescing_manager

a = [torch.full((5,), float(RANK + i), device="neuron") for i in range(3)]
with _coalescing_manager(device=torch.device("neuron")):
    for t in a:
        dist.all_reduce(t)
assert all(torch.equal(t.cpu(), torch.full((5,), float(sum(range(WORLD)) + WORLD * i))) for i, t in enumerate(a))
ins = [torch.arange(4, dtype=torch.float32, device="neuron") + 10 * RANK + i for i in range(2)]
gathered = [torch.empty(4 * WORLD, device="neuron") for _ in ins]
with _coalescing_manager(device=torch.device("neuron")):
    for o, i in zip(gathered, ins):
        dist.all_gather_into_tensor(o, i)
for k, o in enumerate(gathered):
    assert torch.equal(o.cpu(), torch.cat([torch.arange(4.0) + 10 * r + k for r in range(WORLD)]))
big = [torch.arange(2 * WORLD, dtype=torch.float32, device="neuron") * (RANK + 1 + i) for i in range(2)]
scattered = [torch.empty(2, device="neuron") for _ in big]
with _coalescing_manager(device=torch.device("neuron")):
    for o, i in zip(scattered, big):
        dist.reduce_scatter_tensor(o, i)
s = sum(r + 1 for r in range(WORLD))
for k, o in enumerate(scattered):
    full = torch.arange(2 * WORLD, dtype=torch.float32) * (s + WORLD * k)
    assert torch.equal(o.cpu(), full[2 * RANK : 2 * RANK + 2])
lists = [[torch.empty(3, device="neuron") for _ in range(WORLD)] for _ in range(2)]
dist.all_gather_coalesced(lists, [torch.full((3,), float(RANK + 10 * k), device="neuron") for k in range(2)])
assert all(torch.equal(lists[k][r].cpu(), torch.full((3,), float(r + 10 * k))) for k in range(2) for r in range(WORLD))
checked += 4

# send / recv: both ranks send first (the ring holds a small message), and a
# 3 MiB message that streams through the 1 MiB ring while the peer posts late.
peer = RANK ^ 1
if peer < WORLD:
    for n in (0, 7, 3 << 18):
        mine = data(RANK, torch.float32, n, salt=n)
        s = dist.isend(mine.to("neuron"), peer)
        back = torch.empty(n, device="neuron")
        dist.recv(back, peer)
        s.wait()
        assert torch.equal(back.cpu(), data(peer, torch.float32, n, salt=n)), ("send/recv", n)
    checked += 3
# batch_isend_irecv around a ring, bf16.
right, left = (RANK + 1) % WORLD, (RANK - 1) % WORLD
send_t = torch.full((1 << 18,), float(RANK), dtype=torch.bfloat16, device="neuron")
recv_t = torch.empty(1 << 18, dtype=torch.bfloat16, device="neuron")
for w in dist.batch_isend_irecv([dist.P2POp(dist.isend, send_t, right), dist.P2POp(dist.irecv, recv_t, left)]):
    w.wait()
assert torch.equal(recv_t.cpu(), torch.full((1 << 18,), float(left), dtype=torch.bfloat16))
# A mismatched recv names both sides, and the pair stays usable.
if RANK in (0, 1):
    if RANK == 0:
        dist.send(torch.ones(10, device="neuron"), 1)
        dist.send(torch.full((4,), 2.0, device="neuron"), 1)
    else:
        try:
            dist.recv(torch.empty(12, device="neuron"), 0)
            raise SystemExit("mismatched recv did not raise")
        except dist.DistBackendError as e:
            assert "recv of 48 bytes" in str(e) and "rank 0 sent 40 bytes" in str(e), e
        t = torch.empty(4, device="neuron")
        dist.recv(t, 0)
        assert torch.equal(t.cpu(), torch.full((4,), 2.0))
try:
    dist.recv(torch.empty(1, device="neuron"))
    raise SystemExit("recv from any source did not raise")
except RuntimeError as e:
    assert "pass src=" in str(e), e
checked += 3

# Subgroups: new_group of the even ranks, and split_group into halves.
evens = dist.new_group([r for r in range(WORLD) if r % 2 == 0])
if RANK % 2 == 0:
    t = torch.ones(3, device="neuron")
    dist.all_reduce(t, group=evens)
    assert torch.equal(t.cpu(), torch.full((3,), float((WORLD + 1) // 2)))
halves = [list(range(WORLD // 2)), list(range(WORLD // 2, WORLD))]
half = dist.split_group(split_ranks=halves)
t = torch.full((2,), float(RANK), device="neuron")
dist.all_reduce(t, group=half)
mine = halves[0] if RANK in halves[0] else halves[1]
assert torch.equal(t.cpu(), torch.full((2,), float(sum(mine)))), t
assert dist.get_world_size(half) == WORLD // 2
checked += 2
dist.barrier()
print("checked", checked)
dist.destroy_process_group()

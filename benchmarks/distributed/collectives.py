"""Collectives of the `neuron` backend against gloo, in one run on one host:
allreduce, all_gather_into_tensor and reduce_scatter_tensor, 8 B to 64 MiB per
rank, world sizes 2 and 4. Both backends live in one process group
(`"cpu:gloo,neuron:neuron"`): CPU tensors go to gloo, neuron tensors to this
project's shared-memory transport, so the two are measured in the same
processes, interleaved per size. Latency is the slowest rank's mean time per
call; bus bandwidth follows nccl-tests (allreduce: bytes x 2(n-1)/n / t;
all-gather and reduce-scatter: bytes of the whole tensor x (n-1)/n / t).
neuron runs twice: reading the peers' buffers in place (its default for calls
over 64 KiB per rank) and through its shared-memory slots
(TORCH_NEURONX_DIRECT_COLLECTIVES=0), interleaved. Beside them, the floor
(one meeting of the ranks, a barrier's exchange of cache lines, through the
backend's own call path without c10d's Python layer) and each rank's memcpy of the same bytes (a CPU tensor copy_).

Run: .venv/bin/python benchmarks/distributed/collectives.py [--worlds 2 4] [--max-mib 64]
"""

import argparse
import json

import _shared  # noqa: F401  (benchmarks/ on sys.path: the shared helpers)
from _figures import Table, report
from _ranks import run_ranks

WORKER = r"""
import datetime, json, os, sys, time
import torch, torch.distributed as dist
import torch_neuronx  # registers the neuron backend
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
store = dist.FileStore(os.environ["BENCH_STORE"], world)
dist.init_process_group("cpu:gloo,neuron:neuron", store=store, rank=rank, world_size=world,
                        timeout=datetime.timedelta(seconds=300))
sizes = json.loads(os.environ["BENCH_SIZES"])

def timed(fn, nbytes):
    iters = max(3, min(200, (64 << 20) // max(nbytes, 1)))
    for _ in range(2):
        fn()
    dist.barrier()
    start = time.perf_counter()
    for _ in range(iters):
        fn()
    elapsed = torch.tensor([(time.perf_counter() - start) / iters], dtype=torch.float64)
    dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)  # CPU tensor: gloo; outside the timed loop
    return elapsed.item()

backend = dist.distributed_c10d._get_default_group()._get_backend(torch.device("neuron"))
rows = [{"op": "floor", "bytes": 0, "backend": "neuron",
         "seconds": timed(lambda: torch_neuronx._C._process_group_meet(backend), 1 << 20)}]
for nbytes in sizes:
    src, dst = torch.ones(nbytes // 4 or 1), torch.empty(nbytes // 4 or 1)
    rows.append({"op": "memcpy", "bytes": src.nbytes, "backend": "cpu",
                 "seconds": timed(lambda: dst.copy_(src), src.nbytes)})
    n = max(1, nbytes // 4)
    for device in ("cpu", "neuron"):
        x = torch.ones(n, device=device)
        big = torch.ones(n * world, device=device)
        small = torch.empty(n, device=device)
        mine = big[rank * n:(rank + 1) * n]  # FSDP2's all-gather: the input is this rank's part of the output
        ops = {
            "allreduce": lambda: dist.all_reduce(x),
            "all_gather_into_tensor": lambda: dist.all_gather_into_tensor(big, x),
            "all_gather_into_tensor, in place": lambda: dist.all_gather_into_tensor(big, mine),
            "reduce_scatter_tensor": lambda: dist.reduce_scatter_tensor(small, big),
        }
        # neuron twice: reading the peers' buffers in place (the default), and
        # through the slots (TORCH_NEURONX_DIRECT_COLLECTIVES=0), interleaved.
        forms = [("gloo", True)] if device == "cpu" else [("neuron", True), ("neuron-slots", False)]
        for op, fn in ops.items():
            for backend, direct in forms:
                dist.barrier()
                torch_neuronx._C._set_direct_collectives(direct)
                rows.append({"op": op, "bytes": n * 4, "backend": backend,
                             "seconds": timed(fn, n * 4 * (world if op != "allreduce" else 1))})
            torch_neuronx._C._set_direct_collectives(True)
if rank == 0:
    print(json.dumps(rows))
dist.destroy_process_group()
"""


def run_world(world: int, sizes: list[int]) -> list[dict]:
    out = run_ranks(WORKER, world, BENCH_SIZES=json.dumps(sizes))
    return json.loads(out.strip().splitlines()[-1])


def bus_bandwidth(op: str, nbytes: int, world: int, seconds: float) -> float:
    if op == "allreduce":
        return nbytes * 2 * (world - 1) / world / seconds
    return nbytes * world * (world - 1) / world / seconds


def fmt_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB"):
        if n < 1024 or unit == "MiB":
            return f"{n:g} {unit}"
        n //= 1024
    return str(n)


NOTE = (
    "Against gloo (CPU tensors) in the same processes, interleaved per size; slots: neuron through its shared-memory "
    "slots (TORCH_NEURONX_DIRECT_COLLECTIVES=0); memcpy: one rank's copy of the same bytes, beside its peers. "
    "Latency: the slowest rank's mean per call; bus bandwidth as nccl-tests (allreduce: bytes x 2(n-1)/n / t; "
    "all-gather and reduce-scatter: bytes of the whole tensor x (n-1)/n / t)."
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--max-mib", type=int, default=64)
    args = parser.parse_args()
    sizes = [8]
    while sizes[-1] * 8 <= args.max_mib << 20:
        sizes.append(sizes[-1] * 8)
    if sizes[-1] != args.max_mib << 20:
        sizes.append(args.max_mib << 20)
    floors = Table(
        "the floor: one meeting of the ranks",
        ["world", "floor us"],
        note="Through the backend's call path without c10d's Python layer (_C._process_group_meet): "
        "the neuron columns' neuron/floor divides by it.",
    )
    tables = [floors]
    for world in args.worlds:
        rows = run_world(world, sizes)
        secs = {(r["op"], r["bytes"], r["backend"]): r["seconds"] for r in rows}
        floor = secs["floor", 0, "neuron"]
        floors.add(world, floor * 1e6)
        for op in ("allreduce", "all_gather_into_tensor", "all_gather_into_tensor, in place", "reduce_scatter_tensor"):
            t = Table(
                f"{op}, world {world}",
                [
                    "size per rank",
                    "gloo us",
                    "neuron us",
                    "slots us",
                    "neuron/floor",
                    "latency gloo/neuron",
                    "gloo busbw GB/s",
                    "neuron busbw GB/s",
                    "busbw neuron/gloo",
                    "memcpy GB/s",
                    "busbw neuron/memcpy",
                    "busbw slots/memcpy",
                ],
                note=NOTE if len(tables) == 1 else f"Against gloo, as in {tables[1].title}.",
            )
            for nbytes in sorted({r["bytes"] for r in rows if r["op"] == op}):
                g, n, sl = (secs[op, nbytes, b] for b in ("gloo", "neuron", "neuron-slots"))
                gb, nb, sb = (bus_bandwidth(op, nbytes, world, s) / 1e9 for s in (g, n, sl))
                mb = nbytes / secs["memcpy", nbytes, "cpu"] / 1e9
                t.add(
                    fmt_bytes(nbytes),
                    g * 1e6,
                    n * 1e6,
                    sl * 1e6,
                    n / floor,
                    g / n,
                    gb,
                    nb,
                    nb / gb,
                    mb,
                    nb / mb,
                    sb / mb,
                )
            tables.append(t)
    report("collectives", tables)


if __name__ == "__main__":
    main()

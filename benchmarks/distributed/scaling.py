"""How the cost grows with the world size on this one host the
allreduce of benchmarks/distributed/collectives.py at 8 B, 1 MiB and 16 MiB, and the time
of one FSDP2 training step of the same MLP, at world 2, 4 and 8, neuron beside
gloo (CPU tensors) in the same processes. The machine has 2 cores: at world 4
and 8 the ranks are oversubscribed (1 thread each), so time grows with the
world size even where a real fleet's would not; the table shows how much.

The FSDP2 model: 4 layers of Linear(1024, 1024) + GELU, fully_shard per layer
and at the root, fp32, batch 8 per rank, SGD; median of 8 steps after 2.

Run: .venv/bin/python benchmarks/distributed/scaling.py [--worlds 2 4 8]
"""

import argparse
import json
import os

import _shared  # noqa: F401  (benchmarks/ on sys.path: the shared helpers)
from _figures import Table, report
from _ranks import run_ranks
from collectives import bus_bandwidth, run_world

SIZES = [8, 1 << 20, 16 << 20]

FSDP_WORKER = r"""
import datetime, json, os, statistics, time
import torch, torch.distributed as dist
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
import torch_neuronx  # registers the neuron backend
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
store = dist.FileStore(os.environ["BENCH_STORE"], world)
dist.init_process_group("cpu:gloo,neuron:neuron", store=store, rank=rank, world_size=world,
                        timeout=datetime.timedelta(seconds=600))
result = {}
for device in ("neuron", "cpu"):
    torch.manual_seed(0)
    mesh = init_device_mesh(device, (world,))
    model = nn.Sequential(*[nn.Sequential(nn.Linear(1024, 1024), nn.GELU()) for _ in range(4)]).to(device)
    for layer in model:
        fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(8, 1024, device=device)
    def step():
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        loss.item()
    times = []
    for i in range(10):
        dist.barrier()
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    slowest = torch.tensor([statistics.median(times[2:])], dtype=torch.float64)
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    result["gloo" if device == "cpu" else "neuron"] = slowest.item()
if rank == 0:
    print(json.dumps(result))
dist.destroy_process_group()
"""


def fsdp_step(world: int) -> dict:
    # One NeuronCore per rank: a Trainium2 chip has 4 at LNC=2.
    out = run_ranks(FSDP_WORKER, world, TORCH_NEURONX_EMU_CHIPS=str(-(-world // 4)))
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", type=int, nargs="+", default=[2, 4, 8])
    args = parser.parse_args()
    table = Table(
        "cost against the world size on one host",
        [
            "world",
            "ranks per core",
            "allreduce 8 B neuron us",
            "allreduce 8 B gloo/neuron",
            "allreduce 1 MiB neuron busbw GB/s",
            "allreduce 1 MiB busbw neuron/gloo",
            "allreduce 16 MiB neuron busbw GB/s",
            "allreduce 16 MiB busbw neuron/gloo",
            "FSDP2 step neuron ms",
            "FSDP2 step gloo ms",
            "FSDP2 step gloo/neuron",
        ],
        note="Against gloo (CPU tensors) in the same processes: benchmarks/distributed/collectives.py's allreduce, "
        "and one FSDP2 step of 4 x Linear(1024, 1024) + GELU, batch 8 per rank, SGD (median of 8 steps after 2, "
        "slowest rank). Above one rank per core the ranks are oversubscribed.",
    )
    for world in args.worlds:
        rows = run_world(world, SIZES)
        t = {(r["op"], r["bytes"], r["backend"]): r["seconds"] for r in rows}
        cells = [t["allreduce", 8, "neuron"] * 1e6, t["allreduce", 8, "gloo"] / t["allreduce", 8, "neuron"]]
        for size in SIZES[1:]:
            n, g = (bus_bandwidth("allreduce", size, world, t["allreduce", size, b]) / 1e9 for b in ("neuron", "gloo"))
            cells += [n, n / g]
        step = fsdp_step(world)
        table.add(
            world,
            world / os.cpu_count(),
            *cells,
            step["neuron"] * 1e3,
            step["gloo"] * 1e3,
            step["gloo"] / step["neuron"],
        )
        print(f"world {world} done", flush=True)
    report("scaling", [table])


if __name__ == "__main__":
    main()

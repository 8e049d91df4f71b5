"""Where the time of a small collective goes, at world 2, in the
same two processes: one meeting of the ranks (the floor: a barrier's exchange
of cache lines, through the backend's call path, `_C._process_group_meet`;
also 100 meetings per call, without Python between them), dist.all_reduce of
8 bytes, the same on a group of this rank alone (c10d's Python layer and the
backend's per-call work, no meeting), the asynchronous forms waited for at
once (async_op=True; the functional collectives compiled graphs call; the
functional API's Python wrapper), all against the neuron backend.

Run: .venv/bin/python benchmarks/distributed/collective_latency.py
"""

import json

import _shared  # noqa: F401  (benchmarks/ on sys.path: the shared helpers)
from _figures import Table, report
from _ranks import run_ranks

WORKER = r"""
import datetime, json, os, time
import torch, torch.distributed as dist
import torch.distributed._functional_collectives as fc
import torch_neuronx
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
dist.init_process_group("neuron", store=dist.FileStore(os.environ["BENCH_STORE"], world), rank=rank,
                        world_size=world, timeout=datetime.timedelta(seconds=60))
meet = torch_neuronx._C._process_group_meet
backend = dist.group.WORLD._get_backend(torch.device("neuron"))
alone = [dist.new_group([r]) for r in range(world)][rank]
x = torch.ones(2, device="neuron")
ops, name = torch.ops._c10d_functional, dist.group.WORLD.group_name

def us(fn, n=5000):
    for _ in range(200):
        fn()
    dist.barrier()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n * 1e6

rows = [
    ("floor: one meeting", lambda: us(lambda: meet(backend))),
    ("floor: 100 meetings in one call, per meeting", lambda: us(lambda: meet(backend, 100), 100) / 100),
    ("dist.all_reduce, 8 B", lambda: us(lambda: dist.all_reduce(x))),
    ("dist.all_reduce, 8 B, a group of this rank alone", lambda: us(lambda: dist.all_reduce(x, group=alone))),
    ("dist.all_reduce(async_op=True).wait()", lambda: us(lambda: dist.all_reduce(x, async_op=True).wait())),
    ("_c10d_functional all_reduce_ + wait_tensor",
     lambda: us(lambda: ops.wait_tensor(ops.all_reduce_(x, "sum", name)))),
    ("functional_collectives.all_reduce(...).wait()",
     lambda: us(lambda: fc.all_reduce(x, "sum", dist.group.WORLD).wait())),
]
results = [(label, fn()) for label, fn in rows]
if rank == 0:
    print(json.dumps(results))
dist.destroy_process_group()
"""


def main() -> None:
    results = json.loads(run_ranks(WORKER, 2, timeout=600).strip().splitlines()[-1])
    floor = results[0][1]
    table = Table(
        "a small collective's time at world 2, rank 0 (mean of 5,000 calls after 200; the 100-meeting call: of 100)",
        ["path", "us per call", "x floor"],
        note="Against the floor: one meeting of the ranks through the backend's call path "
        "(_C._process_group_meet), all on the neuron backend.",
    )
    for label, t in results:
        table.add(label, t, t / floor)
    report("collective_latency", [table])


if __name__ == "__main__":
    main()

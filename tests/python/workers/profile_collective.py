"""Each rank profiles an all_reduce and an all_gather on the neuron process
group and checks its own trace: the collective slices carry bytes, the world
size and the transport, link to the CPU op, and are estimated by the
collective model."""

import sys

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile

import torch_neuronx  # noqa: F401
from helpers.chrome_trace import Trace
from helpers.rank import RANK, WORLD, init

init()
torch.neuron.set_device(RANK)
x = torch.ones(1024, device="neuron")
out = torch.empty(1024 * WORLD, device="neuron")
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
    dist.all_reduce(x)
    dist.all_gather_into_tensor(out, x)
    torch.neuron.synchronize()
path = f"{sys.argv[1]}/rank{RANK}.json"
prof.export_chrome_trace(path)
trace = Trace(path)
pid = trace.device_pid(RANK)
coll = {e["name"]: e for e in trace.measured(pid) if e["args"].get("kind") == "collective"}
assert {"c10d::allreduce", "c10d::allgather"} <= set(coll), coll
for e in coll.values():
    assert e["args"]["bytes"] > 0 and e["args"]["world"] == WORLD and e["args"]["detail"] == "shared memory", e
    assert e["args"]["correlation"] in trace.flows("s"), e
est = {e["name"]: e for e in trace.estimated(pid)}
assert est["c10d::allreduce (estimated)"]["args"]["engine"] == "collective"
assert est["c10d::allreduce (estimated)"]["dur"] > 0
dist.destroy_process_group()
print("profiled collectives", sorted(coll))

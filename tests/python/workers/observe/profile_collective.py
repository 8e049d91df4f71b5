"""Each rank profiles an all_reduce and an all_gather on the neuron process
group and checks its own trace: the collective slices carry bytes, the world
size and the transport, link to the CPU op, and are estimated by the
collective model."""

import sys
import time

import torch
import torch.distributed as dist
from helpers.chrome_trace import Trace
from helpers.rank import RANK, WORLD, init
from torch.profiler import ProfilerActivity, profile

import torch_neuronx  # noqa: F401

init()
torch.neuron.set_device(RANK)
x = torch.ones(1024, device="neuron")
out = torch.empty(1024 * WORLD, device="neuron")
y = torch.ones(8, device="neuron")
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
    dist.all_reduce(x)
    dist.all_gather_into_tensor(out, x)
    work = dist.broadcast(y, src=0, async_op=True)
    while not work.is_completed():  # the worker runs it (wait() at once may run it itself: help_until)
        time.sleep(0.001)
    work.wait()
    torch.neuron.synchronize()
path = f"{sys.argv[1]}/rank{RANK}.json"
prof.export_chrome_trace(path)
trace = Trace(path)
pid = trace.device_pid(RANK)
coll = {e["name"]: e for e in trace.measured(pid) if e["args"].get("kind") == "collective"}
assert {"c10d::allreduce", "c10d::allgather", "c10d::broadcast"} <= set(coll), coll
for e in coll.values():
    assert e["args"]["bytes"] > 0 and e["args"]["world"] == WORLD and e["args"]["detail"] == "shared memory", e
    assert e["args"]["correlation"] in trace.flows("s"), e
# A collective its caller waits for at once runs on the caller's thread; an
# async one not yet waited for on the group's worker thread.
launches = {
    e["args"]["correlation"]: e
    for e in trace.events
    if e.get("ph") == "X" and e.get("name") == "neuron launch" and "correlation" in e.get("args", {})
}
main_tid = launches[coll["c10d::allreduce"]["args"]["correlation"]]["tid"]
assert launches[coll["c10d::allgather"]["args"]["correlation"]]["tid"] == main_tid
assert launches[coll["c10d::broadcast"]["args"]["correlation"]]["tid"] != main_tid
assert any(
    e.get("cat") == "cpu_op" and e.get("name") == "c10d::allreduce_" and e["tid"] == main_tid for e in trace.events
)
est = {e["name"]: e for e in trace.estimated(pid)}
assert est["c10d::allreduce (estimated)"]["args"]["engine"] == "collective"
assert est["c10d::allreduce (estimated)"]["dur"] > 0
dist.destroy_process_group()
print("profiled collectives", sorted(coll))

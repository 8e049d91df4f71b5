"""Two hosts made of network namespaces, two ranks each, launched by
`torchrun --nnodes=2`: the group sees two hosts, and allreduce (hierarchical:
shared memory on each host, Gloo over TCP between them), the other collectives,
send / recv across hosts and an FSDP2 step give the single-host results. The
same script also runs with TORCH_NEURONX_HOST_ID splitting one machine into two
hosts (no root needed)."""

import os
import subprocess
import sys

import pytest

import netns_hosts
from dist_launch import assert_all_ok, launch

SCRIPT = r'''
import os, datetime, torch, torch.distributed as dist
import torch_neuronx._distributed as nd
dist.init_process_group("neuron", timeout=datetime.timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()
assert torch.neuron.current_device() == int(os.environ["LOCAL_RANK"])
assert nd.host_count() == 2, nd.host_count()
for dtype in (torch.float32, torch.bfloat16, torch.int64):
    for n in (1, 1000, (5 << 20) // 4 + 3):
        t = torch.full((n,), rank + 1, dtype=dtype, device="neuron")
        dist.all_reduce(t)
        assert torch.equal(t.cpu(), torch.full((n,), sum(range(1, world + 1)), dtype=dtype)), (dtype, n)
t = torch.full((8,), float(rank), device="neuron")
dist.all_reduce(t, op=dist.ReduceOp.AVG)
assert torch.allclose(t.cpu(), torch.full((8,), (world - 1) / 2))
t = torch.full((8,), float(rank + 1), device="neuron")
dist.all_reduce(t, op=dist.ReduceOp.MAX)
assert torch.equal(t.cpu(), torch.full((8,), float(world)))
g = torch.empty(4 * world, device="neuron")
dist.all_gather_into_tensor(g, torch.full((4,), float(rank), device="neuron"))
assert torch.equal(g.cpu(), torch.arange(world, dtype=torch.float32).repeat_interleave(4))
rs = torch.empty(2, device="neuron")
dist.reduce_scatter_tensor(rs, torch.arange(2 * world, dtype=torch.float32, device="neuron"))
assert torch.equal(rs.cpu(), world * torch.arange(2 * rank, 2 * rank + 2, dtype=torch.float32))
b = torch.full((3,), float(rank), device="neuron")
dist.broadcast(b, src=world - 1)
assert torch.equal(b.cpu(), torch.full((3,), float(world - 1)))
out = torch.empty(world, device="neuron")
dist.all_to_all_single(out, torch.arange(world, dtype=torch.float32, device="neuron") + 10 * rank)
assert torch.equal(out.cpu(), torch.arange(world, dtype=torch.float32) * 10 + rank)
peer = (rank + 2) % world  # on the other host
got = torch.empty(5, device="neuron")
ops = [dist.P2POp(dist.isend, torch.full((5,), float(rank), device="neuron"), peer),
       dist.P2POp(dist.irecv, got, peer)]
for w in dist.batch_isend_irecv(ops):
    w.wait()
assert torch.equal(got.cpu(), torch.full((5,), float(peer)))
dist.barrier()

# One FSDP2 step across the hosts equals the step of one process on the whole batch.
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
def build():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4)).to("neuron")
data = torch.randn(4 * world, 16, generator=torch.Generator().manual_seed(1))
ref = build()
ref(data.to("neuron")).square().mean().backward()
torch.optim.SGD(ref.parameters(), lr=0.1).step()
model = build()
fully_shard(model, mesh=init_device_mesh("neuron", (world,)))
model(data[4 * rank:4 * rank + 4].to("neuron")).square().mean().backward()
torch.optim.SGD(model.parameters(), lr=0.1).step()
for p, q in zip(model.parameters(), ref.parameters()):
    assert torch.allclose(p.full_tensor().cpu(), q.detach().cpu(), rtol=1e-5, atol=1e-6)
assert nd.tcp_bytes() > 0 and nd.shm_bytes() > 0, (nd.tcp_bytes(), nd.shm_bytes())  # both transports moved data
print("multihost ok", rank)
dist.destroy_process_group()
'''

REASON = netns_hosts.available()


@pytest.mark.skipif(bool(REASON), reason=f"multi-host test needs network namespaces: {REASON}")
def test_two_hosts_of_two_ranks_under_torchrun(tmp_path):
    script = tmp_path / "multihost.py"
    script.write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEURON_", "TORCH_NEURONX_"))}
    env["OMP_NUM_THREADS"] = "1"
    with netns_hosts.two_hosts() as hosts:
        master = hosts[0][2]
        procs = []
        for node, (ns, dev, _) in enumerate(hosts):
            cmd = ["ip", "netns", "exec", ns, sys.executable, "-m", "torch.distributed.run", "--nnodes=2",
                   f"--node_rank={node}", "--nproc_per_node=2", f"--master_addr={master}", "--master_port=29517",
                   str(script)]
            procs.append(subprocess.Popen(cmd, env=dict(env, GLOO_SOCKET_IFNAME=dev), stdout=subprocess.PIPE,
                                          stderr=subprocess.STDOUT, text=True))
        outs = []
        for p in procs:
            try:
                outs.append(p.communicate(timeout=240)[0])
            except subprocess.TimeoutExpired:
                p.kill()
                outs.append(p.communicate()[0] + "\n[killed after 240 s]")
    for p, out in zip(procs, outs):
        assert p.returncode == 0, out[-5000:]
    assert sum(out.count("multihost ok") for out in outs) == 4, outs


def test_host_id_override_splits_one_machine_into_two_hosts(tmp_path):
    # Ranks 0, 1 and 2, 3 claim different hosts: the group goes over TCP between them.
    code = SCRIPT.replace('dist.init_process_group("neuron", timeout=datetime.timedelta(seconds=60))',
                          'os.environ["TORCH_NEURONX_HOST_ID"] = f"host{RANK // 2}"\ninit(timeout_s=60)')
    code = code.replace('assert torch.neuron.current_device() == int(os.environ["LOCAL_RANK"])\n', '')
    results = launch(code, 4, tmp_path)
    assert_all_ok(results)
    assert all("multihost ok" in r.stdout for r in results)

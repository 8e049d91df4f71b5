"""Two hosts made of network namespaces, two ranks each, launched by
`torchrun --nnodes=2`: the group sees two hosts, and allreduce (hierarchical:
shared memory on each host, Gloo over TCP between them), the other collectives,
send / recv across hosts and an FSDP2 step give the single-host results. The
same script also runs with TORCH_NEURONX_HOST_ID splitting one machine into two
hosts (no root needed)."""

import subprocess
import sys

import pytest
from helpers import netns_hosts
from helpers.dist_launch import launch_ok
from helpers.processes import worker_env, worker_path

REASON = netns_hosts.available()


@pytest.mark.skipif(bool(REASON), reason=f"multi-host test needs network namespaces: {REASON}")
def test_two_hosts_of_two_ranks_under_torchrun(tmp_path):
    script = worker_path("multihost_collectives")
    env = worker_env(OMP_NUM_THREADS="1")
    with netns_hosts.two_hosts() as hosts:
        master = hosts[0][2]
        procs = []
        for node, (ns, dev, _) in enumerate(hosts):
            cmd = [
                "ip",
                "netns",
                "exec",
                ns,
                sys.executable,
                "-m",
                "torch.distributed.run",
                "--nnodes=2",
                f"--node_rank={node}",
                "--nproc_per_node=2",
                f"--master_addr={master}",
                "--master_port=29517",
                str(script),
            ]
            procs.append(
                subprocess.Popen(
                    cmd,
                    env=dict(env, GLOO_SOCKET_IFNAME=dev),
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                )
            )
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
    launch_ok("multihost_collectives", 4, tmp_path, expect="multihost ok", args=["--host-id-by-rank"])

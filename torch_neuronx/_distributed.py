"""Registers the `neuron` process-group backend with torch.distributed.

`dist.init_process_group("neuron")`, `"cpu:gloo,neuron:neuron"`, `new_group`,
DeviceMesh("neuron", ...) then create `ProcessGroupNeuron` (C++,
csrc/distributed/). Under torchrun the rank's current device becomes
`neuron:LOCAL_RANK` (every process sees every core)."""

import os
import socket
import sys

import torch
import torch.distributed as dist

from . import _C, settings


def host_identity() -> str:
    """What ranks share when they can meet in shared memory: the machine's
    name and the network namespace (a namespace stands for a host in tests,
    and ranks that cannot reach each other's loopback are not co-located), or
    TORCH_NEURONX_HOST_ID when set."""
    override = settings.value("TORCH_NEURONX_HOST_ID")
    if override:
        return override
    try:
        netns = os.readlink("/proc/self/ns/net")
    except OSError:
        netns = ""
    return f"{socket.gethostname()}|{netns}"


def _host_span(store, rank: int, size: int, timeout, group: str):
    """Each rank's host index (hosts numbered in order of their first rank),
    exchanged through the group's store; None when every rank is on this host."""
    store.set(f"torch_neuronx/host_of/{rank}", host_identity())
    try:
        store.wait([f"torch_neuronx/host_of/{r}" for r in range(size)], timeout)
    except Exception as e:
        missing = [r for r in range(size) if not store.check([f"torch_neuronx/host_of/{r}"])]
        raise dist.DistBackendError(
            f"neuron process group '{group}', init: timed out after {int(timeout.total_seconds() * 1000)} ms "
            f"waiting for rank {', '.join(map(str, missing))} of the group to join ({e})"
        ) from None
    ids = [store.get(f"torch_neuronx/host_of/{r}").decode() for r in range(size)]
    if len(set(ids)) == 1:
        return None
    order = list(dict.fromkeys(ids))
    return [order.index(i) for i in ids]


def _this_run(store, size: int):
    """The group's keys for this run. A store can outlive its run (a FileStore
    whose file a killed or unclean run left behind; a TCPStore reused after
    destroy_process_group) and still hold that run's keys, among them the name
    of a segment since unlinked. Each rank counts its join per group size, and
    all keys go under that size and the generation the count gives, so every
    rank of one run reads only what that run wrote."""
    generation = (store.add(f"torch_neuronx/joins/{size}", 1) - 1) // size
    return dist.PrefixStore(f"torch_neuronx/run/{size}/{generation}/", store)


def _create_backend(common_opts, backend_opts):
    local_rank = os.environ.get("LOCAL_RANK")
    count = torch.neuron.device_count()
    if local_rank is not None and count:
        torch.neuron.set_device(int(local_rank) % count)
    store, rank, size, timeout = common_opts.store, common_opts.group_rank, common_opts.group_size, common_opts.timeout
    strict = sys.modules.get("torch_neuronx.observability.strict_events")  # loaded when strict mode was ever on
    if strict is not None:
        strict.check_process_group(size)  # more ranks on this host than the emulated instance has cores
    if size > 1:
        store = _this_run(store, size)
    hosts = _host_span(store, rank, size, timeout, str(common_opts.group_id)) if size > 1 else None
    if hosts is None:
        return _C._create_process_group(store, rank, size, timeout.total_seconds(), str(common_opts.group_id))
    # Between hosts: Gloo over TCP (GLOO_SOCKET_IFNAME picks the interface), on
    # CPU views of device memory; one group of every rank, one of each host's first rank.
    world = dist.ProcessGroupGloo(dist.PrefixStore("torch_neuronx/gloo/all/", store), rank, size, timeout)
    leaders_of = [hosts.index(h) for h in range(max(hosts) + 1)]
    leaders = None
    if rank in leaders_of:
        leaders = dist.ProcessGroupGloo(
            dist.PrefixStore("torch_neuronx/gloo/leaders/", store), leaders_of.index(rank), len(leaders_of), timeout
        )
    return _C._create_process_group(
        store, rank, size, timeout.total_seconds(), str(common_opts.group_id), hosts, world, leaders
    )


def register() -> None:
    if not dist.is_available() or "neuron" in dist.Backend.backend_list:
        return
    dist.Backend.register_backend("neuron", _create_backend, extended_api=True, devices=["neuron"])


def _neuron_backend(group):
    pg = dist.distributed_c10d._get_default_group() if group is None else group
    return pg._get_backend(torch.device("neuron"))


def host_count(group=None) -> int:
    """Hosts the ranks of `group` (default: the world) are on."""
    return _C._process_group_host_count(_neuron_backend(group))


def tcp_bytes(group=None) -> int:
    """Bytes this rank handed to the TCP transport (Gloo, between hosts) in `group`."""
    return _C._process_group_tcp_bytes(_neuron_backend(group))


def shm_bytes(group=None) -> int:
    """Bytes this rank moved through shared memory in `group` (default: the world)."""
    return _C._process_group_shm_bytes(_neuron_backend(group))

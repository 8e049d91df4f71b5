"""Registers the `neuron` process-group backend with torch.distributed.

`dist.init_process_group("neuron")`, `"cpu:gloo,neuron:neuron"`, `new_group`,
DeviceMesh("neuron", ...) then create `ProcessGroupNeuron` (C++,
csrc/distributed/). Under torchrun the rank's current device becomes
`neuron:LOCAL_RANK` (decision 1: every process sees every core)."""

import os

import torch
import torch.distributed as dist

from . import _C


def _create_backend(common_opts, backend_opts):
    local_rank = os.environ.get("LOCAL_RANK")
    count = torch.neuron.device_count()
    if local_rank is not None and count:
        torch.neuron.set_device(int(local_rank) % count)
    return _C._create_process_group(common_opts.store, common_opts.group_rank, common_opts.group_size,
                                    common_opts.timeout.total_seconds(), str(common_opts.group_id))


def register() -> None:
    if not dist.is_available() or "neuron" in dist.Backend.backend_list:
        return
    dist.Backend.register_backend("neuron", _create_backend, extended_api=True, devices=["neuron"])


def shm_bytes(group=None) -> int:
    """Bytes this rank moved through shared memory in `group` (default: the world)."""
    backend = dist.distributed_c10d._get_default_group() if group is None else group
    return _C._process_group_shm_bytes(backend._get_backend(torch.device("neuron")))

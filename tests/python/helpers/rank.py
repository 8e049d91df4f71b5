"""What a rank started by `helpers.dist_launch.launch` imports: its RANK and
the WORLD size (from the launcher's environment) and `init()`, which joins the
process group through the launcher's FileStore (so a test can leave a rank out)."""

import datetime
import os

import torch.distributed as dist

RANK, WORLD = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])


def init(timeout_s=60, backend="neuron", **kwargs):
    store = dist.FileStore(os.environ["NEURON_TEST_STORE"], WORLD)
    dist.init_process_group(
        backend, store=store, rank=RANK, world_size=WORLD, timeout=datetime.timedelta(seconds=timeout_s), **kwargs
    )

"""A recv that nobody matches times out (Work.wait's own timeout, then the
group's) and the group stays usable (test_distributed_rooted_p2p.py)."""

import datetime

import torch
import torch.distributed as dist
from helpers.rank import RANK, init

init(timeout_s=3)
if RANK == 0:
    work = dist.irecv(torch.empty(4, device="neuron"), 1)
    try:
        work.wait(datetime.timedelta(milliseconds=300))  # Work.wait's own timeout, shorter than the group's
        raise SystemExit("wait(timeout) on a recv that nobody sends returned")
    except RuntimeError as e:
        assert "timed out" in str(e), e
    try:
        work.wait()
        raise SystemExit("recv that nobody sends returned")
    except dist.DistBackendError as e:
        assert "timed out after 3000 ms" in str(e) and "rank 1 sent nothing" in str(e), e
else:
    import time

    time.sleep(4.5)  # past rank 0's 3 s timeout, within its next 3 s: the group is still usable
dist.barrier()
print("ok")

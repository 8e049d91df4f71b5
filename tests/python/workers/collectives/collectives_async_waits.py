"""Asynchronous collectives waited for in every order (test_distributed_collectives.py):
at once (the waiting thread may run the call itself), later, in reverse, from
another thread, and mixed with synchronous calls; every result checked."""

import threading

import torch
import torch.distributed as dist
from helpers.rank import RANK, WORLD, init

init()
torch.neuron.set_device(RANK % torch.neuron.device_count())
total = WORLD * (WORLD + 1) / 2
for i in range(60):
    n = 1 + (i * 4099) % 70000  # both sides of the 64 KiB eager buffer
    a, b, c = (torch.full((n,), float(RANK + 1), device="neuron") for _ in range(3))
    wa = dist.all_reduce(a, async_op=True)
    if i % 3 == 0:
        wa.wait()
    wb = dist.all_reduce(b, async_op=True)
    dist.all_reduce(c)  # synchronous, queued behind the two
    waits = [wb, wa] if i % 2 else [wa, wb]
    if i % 5 == 0:
        t = threading.Thread(target=lambda: [w.wait() for w in waits])
        t.start()
        t.join()
    else:
        for w in waits:
            w.wait()
    for t in (a, b, c):
        assert torch.equal(t.cpu(), torch.full((n,), total)), (i, n)
print("async waits ok")
dist.destroy_process_group()

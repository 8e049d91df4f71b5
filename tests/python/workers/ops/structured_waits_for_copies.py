"""Native structured kernels wait for a queued copy in thread mode
(test_structured_kernels.py)."""

import torch

x = torch.arange(1 << 16, dtype=torch.float32)
for _ in range(20):
    d = x.to("neuron", non_blocking=True)
    r = ((d * 2 + 1) @ torch.ones(1 << 16, 1, device="neuron")).cpu()
    assert torch.equal(r, (x * 2 + 1) @ torch.ones(1 << 16, 1)), r

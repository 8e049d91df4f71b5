"""DDP gradients with the default and the fp16 / bf16 compression hooks
against a locally averaged reference (test_distributed_ddp.py)."""

import torch
import torch.distributed as dist
from helpers.rank import RANK, WORLD, init

init()
torch.neuron.set_device(RANK)
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel as DDP


def grads(hook):
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(32, 8).to("neuron"), device_ids=[RANK])
    if hook is not None:
        model.register_comm_hook(None, hook)
    torch.manual_seed(100 + RANK)
    model(torch.randn(16, 32, device="neuron")).pow(2).sum().backward()
    return model.module.weight.grad.cpu()


# The reference: each rank's gradient computed locally, averaged by hand.
local = []
for r in range(WORLD):
    torch.manual_seed(0)
    lin = torch.nn.Linear(32, 8)
    torch.manual_seed(100 + r)
    lin(torch.randn(16, 32, device="neuron").cpu()).pow(2).sum().backward()
    local.append(lin.weight.grad)
expected = sum(local) / WORLD

torch.testing.assert_close(grads(None), expected, rtol=1e-5, atol=1e-5)
torch.testing.assert_close(grads(default_hooks.fp16_compress_hook), expected, rtol=1e-2, atol=1e-2)
bf16_hook = lambda state, bucket: default_hooks.bf16_compress_hook(state, bucket)  # noqa: E731
torch.testing.assert_close(grads(bf16_hook), expected, rtol=2e-2, atol=2e-2)
torch.testing.assert_close(grads(default_hooks.bf16_compress_hook), expected, rtol=2e-2, atol=2e-2)
print("ddp ok")
dist.destroy_process_group()

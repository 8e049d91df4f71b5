"""One of each problem strict mode finds, each on the line marked `# expect:
<kind> <op>` (test_strict.py reads the marks). Run with NEURON_LOGICAL_NC_CONFIG=1
(12 GiB per core on Trainium2, 8 cores) and TORCH_NEURONX_EMU_HBM=16G."""

import datetime

import torch
import torch.distributed as dist

import torch_neuronx
from torch_neuronx import _C

x = torch.arange(8.0, device="neuron")
_C._set_zero_copy(False)  # every op without a neuron kernel takes the copying CPU fallback
y = torch.cos(x)  # expect: fallback aten::cos
_C._set_zero_copy(True)
total = x.sum().item()  # expect: host_sync aten::_local_scalar_dense
where = torch.nonzero(x)  # expect: host_sync aten::nonzero
wide = x.double() * 2  # expect: float64 aten::mul

model = torch.nn.Linear(8, 8).neuron()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _step in range(2):
    loss = model(x).square().mean()
    loss.backward()
    host = loss.detach().cpu()  # expect: host_sync aten::_copy_from
    opt.step()
    opt.zero_grad()


def body(t):
    t = t * 2
    torch._dynamo.graph_break()  # expect: graph_break
    return t + 1


compiled = torch.compile(body, backend="neuron")
compiled(torch.ones(4, device="neuron"))
compiled(torch.ones(6, device="neuron"))  # expect: recompile
dynamic = torch.compile(lambda t: t * 3, backend="neuron", dynamic=True)
dynamic(torch.ones(5, device="neuron"))  # expect: dynamic_shape

big = torch.empty(13 * 2**30, dtype=torch.uint8, device="neuron")  # over 12 GiB, never touched
del big
opt.step()  # expect: memory neuron:0

timeout, store = datetime.timedelta(seconds=1), dist.HashStore()
try:  # 16 ranks on an instance of 8 cores; no other rank comes
    dist.init_process_group("neuron", store=store, rank=0, world_size=16, timeout=timeout)  # expect: process_group
except Exception as e:  # noqa: BLE001
    print("process group not formed:", type(e).__name__)
print("seeded script done", torch_neuronx.strict.active_mode())

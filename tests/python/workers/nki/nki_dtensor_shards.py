"""NKI kernels on DTensor inputs run by local shard (test_nki_torch_ops.py):
a row-wise RMSNorm-like kernel through nki_op and wrap_nki on a
Shard(0) DTensor equals the same math on the full tensor."""

import nki
import nki.language as nl
import torch
import torch.distributed as dist
from helpers.rank import WORLD, init
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Shard, distribute_tensor

from torch_neuronx import nki_op, wrap_nki


@nki.jit
def row_scale(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    ss = nl.sum(nl.square(t), axis=[1], keepdims=True)
    nl.store(out, value=nl.multiply(t, nl.rsqrt(ss)))
    return out


row_scale_op = nki_op("nki_dtensor_test::row_scale", row_scale)
init()
mesh = init_device_mesh("neuron", (WORLD,))
full = torch.arange(128 * WORLD * 64, dtype=torch.float32).reshape(128 * WORLD, 64) / 1000 + 0.5
ref = full / full.square().sum(1, keepdim=True).sqrt()
d = distribute_tensor(full.to("neuron"), mesh, [Shard(0)])
for name, fn in (("nki_op", row_scale_op), ("wrap_nki", wrap_nki(row_scale))):
    out = fn(d)
    assert isinstance(out, DTensor) and out.placements == (Shard(0),), (name, type(out))
    assert out.to_local().shape == (128, 64)
    torch.testing.assert_close(out.full_tensor().cpu(), ref, rtol=1e-5, atol=1e-6)
print("shards ok")
dist.destroy_process_group()

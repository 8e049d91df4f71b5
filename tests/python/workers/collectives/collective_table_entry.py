"""The test-only collective table entry "test_weighted_sum" (loaded from
tests/cpp/test_collective_entry.cpp's library, argv[1]) through the process
group: every rank gets sum over r of (r + 1) * in_r. argv[2]: "ok" (one host),
"hosts" (each rank its own host: the across-hosts transport), "mismatch"
(rank 0 passes 4 elements, the others 5: the signature check must raise)."""

import ctypes
import os
import sys

mode = sys.argv[2]
if mode == "hosts":
    os.environ["TORCH_NEURONX_HOST_ID"] = f"test-host-{os.environ['RANK']}"

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch_neuronx._C as _C  # noqa: E402
from helpers.rank import RANK, WORLD, init  # noqa: E402

import torch_neuronx._distributed as nd  # noqa: E402

ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)  # registers the entry
init(timeout_s=30)
backend = dist.group.WORLD._get_backend(torch.device("neuron"))
assert nd.host_count() == (WORLD if mode == "hosts" else 1), nd.host_count()


def weighted_sum(x):
    out = torch.empty_like(x)
    _C._process_group_run_collective(backend, "test_weighted_sum", [x], [out], -1).wait()
    return out


n = 4 if mode == "mismatch" and RANK == 0 else (5 if mode == "mismatch" else (3 << 20) // 4 + 7)
x = torch.arange(n, dtype=torch.float32, device="neuron") + RANK
if mode == "mismatch":
    try:
        weighted_sum(x)
    except dist.DistBackendError as e:
        print("raised:", str(e).splitlines()[0])
    sys.exit(0)
got = weighted_sum(x).cpu()
want = sum((r + 1) * (torch.arange(n, dtype=torch.float32) + r) for r in range(WORLD))
assert torch.equal(got, want), (got[:4], want[:4])
try:
    weighted_sum(torch.zeros(3, dtype=torch.int64, device="neuron"))
    raise AssertionError("int64 passed the entry's check")
except RuntimeError as e:
    assert "test_weighted_sum: takes float32" in str(e), e
dist.barrier()
print("table entry ok", mode)
dist.destroy_process_group()

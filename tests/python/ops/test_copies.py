"""Copies host<->device and device<->device, with dtype changes, strides,
pinned non_blocking copies, and many threads at once."""

from concurrent.futures import ThreadPoolExecutor

import pytest
import torch


@pytest.mark.parametrize(
    "dtype",
    [
        torch.float32,
        torch.bfloat16,
        torch.float16,
        torch.int64,
        torch.int32,
        torch.uint8,
        torch.bool,
        torch.float64,
        torch.complex64,
    ],
)
def test_round_trip_every_dtype(dtype):
    src = (torch.randn(33, 17) * 10).to(dtype)
    dev = src.to("neuron")
    assert dev.device.type == "neuron" and dev.dtype == dtype
    assert torch.equal(dev.cpu(), src)


def test_to_device_and_dtype_at_once():
    src = torch.randn(8, 8)
    dev = src.to("neuron", torch.bfloat16)
    assert dev.dtype == torch.bfloat16 and torch.equal(dev.cpu(), src.to(torch.bfloat16))
    back = dev.to("cpu", torch.float64)
    assert back.dtype == torch.float64 and torch.equal(back, src.to(torch.bfloat16).double())
    assert torch.equal(dev.to(torch.float32).cpu(), src.to(torch.bfloat16).float())


def test_strided_and_broadcast_copies():
    src = torch.arange(24.0).reshape(4, 6)
    dev = src.t().to("neuron")  # non-contiguous source
    assert torch.equal(dev.cpu(), src.t())
    target = torch.zeros(6, 8, device="neuron")
    target[:, 2:6].copy_(src.t())  # into a strided view of device memory
    expected = torch.zeros(6, 8)
    expected[:, 2:6] = src.t()
    assert torch.equal(target.cpu(), expected)
    row = torch.zeros(3, 4, device="neuron")
    row.copy_(torch.arange(4.0))  # broadcast
    assert torch.equal(row.cpu(), torch.arange(4.0).expand(3, 4))
    assert torch.equal(dev.t().contiguous().cpu(), src)


def test_device_to_device_same_and_across_cores():
    a = torch.randn(1000, device="neuron:0")
    b = a.to("neuron:3")
    assert b.device.index == 3 and torch.equal(b.cpu(), a.cpu())
    c = torch.empty_like(a)
    c.copy_(a)
    assert torch.equal(c.cpu(), a.cpu())
    d = torch.empty(1000, device="neuron:2", dtype=torch.bfloat16)
    d.copy_(b)
    assert torch.equal(d.cpu(), a.cpu().to(torch.bfloat16))


def test_pinned_non_blocking():
    host = torch.randn(1 << 20).pin_memory()
    assert host.is_pinned() and not torch.randn(4).is_pinned()
    dev = host.to("neuron", non_blocking=True)
    out = torch.empty(1 << 20).pin_memory()
    out.copy_(dev, non_blocking=True)
    torch.neuron.synchronize()
    assert torch.equal(out, host)
    pageable = torch.randn(3)
    assert torch.equal(pageable.to("neuron", non_blocking=True).cpu(), pageable)  # pageable: synchronous


def test_zero_size_and_scalars():
    assert torch.empty(0, 3).to("neuron").cpu().shape == (0, 3)
    s = torch.tensor(2.5).to("neuron")
    assert s.dim() == 0 and s.item() == 2.5
    assert torch.tensor(True, device="neuron").item() is True
    assert torch.tensor([7], device="neuron", dtype=torch.int64).tolist() == [7]


def test_many_threads_copy_at_once():
    # Transformers loads weights with a thread pool: host-to-device copies
    # from many threads must all land intact.
    torch.manual_seed(0)
    sources = [torch.randn(257, 129) for _ in range(64)]

    def move(t):
        return t.to("neuron")

    with ThreadPoolExecutor(max_workers=8) as pool:
        moved = list(pool.map(move, sources))
    for src, dev in zip(sources, moved):
        assert dev.device.type == "neuron" and torch.equal(dev.cpu(), src)

    with ThreadPoolExecutor(max_workers=8) as pool:
        back = list(pool.map(lambda d: d.cpu(), moved))
    assert all(torch.equal(a, b) for a, b in zip(back, sources))

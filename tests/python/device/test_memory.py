"""The caching allocator through torch.neuron: statistics, caching, OOM and
recovery, leaks, host-memory failures."""

import gc

import pytest
import torch
from helpers.processes import run_ok

MiB = 2**20


@pytest.fixture(autouse=True)
def _fresh_cache():
    gc.collect()  # earlier tests' reference cycles (Trainer, Accelerator) may still hold device tensors
    torch.neuron.empty_cache()
    torch.neuron.reset_peak_memory_stats()
    yield
    torch.neuron.empty_cache()


def test_allocated_and_reserved_follow_tensors():
    base = torch.neuron.memory_allocated()
    x = torch.empty(4 * MiB, dtype=torch.uint8, device="neuron")
    assert torch.neuron.memory_allocated() == base + 4 * MiB
    assert torch.neuron.memory_reserved() >= 4 * MiB
    del x
    assert torch.neuron.memory_allocated() == base
    assert torch.neuron.memory_reserved() >= 4 * MiB  # cached
    assert torch.neuron.max_memory_allocated() >= base + 4 * MiB
    torch.neuron.empty_cache()
    assert torch.neuron.memory_reserved() == 0


def test_peak_reset_and_max_reserved():
    x = torch.empty(8 * MiB, dtype=torch.uint8, device="neuron")
    del x
    assert torch.neuron.max_memory_reserved() >= 8 * MiB
    torch.neuron.reset_peak_memory_stats()
    assert torch.neuron.max_memory_allocated() == torch.neuron.memory_allocated()


def test_memory_stats_use_cuda_keys():
    x = torch.empty(1000, device="neuron")
    stats = torch.neuron.memory_stats()
    for key in (
        "allocated_bytes.all.current",
        "allocated_bytes.small_pool.peak",
        "reserved_bytes.all.current",
        "active_bytes.all.current",
        "requested_bytes.all.current",
        "segment.all.current",
        "allocation.all.current",
        "num_ooms",
        "num_alloc_retries",
    ):
        assert key in stats, key
    assert stats["requested_bytes.all.current"] >= 4000
    assert stats["allocated_bytes.all.current"] >= 4096 - 96
    torch.neuron.reset_accumulated_memory_stats()
    assert torch.neuron.memory_stats()["allocated_bytes.all.allocated"] == 0
    del x


def test_memory_summary_and_mem_get_info():
    x = torch.empty(3 * MiB, dtype=torch.uint8, device="neuron:1")
    text = torch.neuron.memory_summary(1)
    assert "neuron:1" in text and "Allocated memory" in text and "3.00 MiB" in text
    free, total = torch.neuron.mem_get_info(1)
    assert total == 24 * 2**30 and total - free >= 3 * MiB
    del x


def test_memory_is_per_device():
    x = torch.empty(2 * MiB, dtype=torch.uint8, device="neuron:2")
    assert torch.neuron.memory_allocated(2) == 2 * MiB
    assert torch.neuron.memory_allocated(3) == 0
    del x


def test_out_of_memory_names_device_sizes_and_recovers():
    out = run_ok("memory_oom_recovers", env={"TORCH_NEURONX_EMU_HBM": "1G"})
    oom, recovered = out.strip().splitlines()
    assert oom.startswith("OOM neuron:1 out of memory")
    assert "tried to allocate 600.00 MiB" in oom
    assert "of 1.00 GiB in use" in oom  # what is in use, and the capacity
    assert recovered == "RECOVERED 3 1"


def test_oom_is_not_a_crash_for_absurd_sizes():
    with pytest.raises(torch.OutOfMemoryError, match="neuron:0 out of memory"):
        torch.empty(2**45, dtype=torch.uint8, device="neuron")
    assert torch.ones(3, device="neuron").sum().item() == 3


def test_host_that_cannot_back_the_capacity_is_reported_as_oom():
    # A capacity far beyond this host's RAM: the device accounting passes, the
    # host cannot map the block, and the same error type explains it.
    out = run_ok("memory_host_cannot_back", env={"TORCH_NEURONX_EMU_HBM": "64T"})
    assert "the host could not provide 16.00 TiB" in out


def test_no_leak_after_a_thousand_cycles():
    torch.neuron.empty_cache()
    before = torch.neuron.memory_allocated()
    for i in range(1000):
        t = torch.empty(1 + (i % 13) * 1000, device="neuron")
        del t
    assert torch.neuron.memory_allocated() == before
    assert torch.neuron.memory_reserved() <= 2 * MiB  # everything came from one cached segment
    free_before, _ = torch.neuron.mem_get_info()
    torch.neuron.empty_cache()
    free_after, total = torch.neuron.mem_get_info()
    assert free_after == total  # nothing left on the device


def test_storage_resize_grows_on_device():
    t = torch.arange(4, dtype=torch.float32).to("neuron")
    s = t.untyped_storage()
    s.resize_(64)
    assert s.nbytes() == 64 and s.device.type == "neuron"
    assert torch.equal(torch.empty(0, device="neuron").set_(s, 0, (4,)).cpu(), torch.arange(4.0))
    r = torch.ones(2, device="neuron")
    r.resize_(3, 4)
    assert r.shape == (3, 4) and r.device.type == "neuron"
    assert torch.equal(r.flatten()[:2].cpu(), torch.ones(2))

"""Streams and events: torch.Stream/torch.Event and torch.neuron's classes,
ordering contracts, timing, and both emulator queue modes."""

import pytest
import torch
from helpers.processes import run_ok


def test_default_and_current_stream():
    s = torch.neuron.current_stream()
    assert s == torch.neuron.default_stream() and s.stream_id == 0
    assert isinstance(s, torch.neuron.Stream) and isinstance(s, torch.Stream)


def test_stream_priority_and_pools():
    hi = torch.neuron.Stream(priority=-1)
    lo = torch.neuron.Stream()
    assert hi.priority == -1 and lo.priority == 0
    assert hi != lo and hi.device == torch.device("neuron", 0)
    assert torch.neuron.Stream(device=2).device_index == 2


def test_stream_context_sets_and_restores():
    s = torch.neuron.Stream()
    with torch.neuron.stream(s):
        assert torch.neuron.current_stream() == s
        x = torch.ones(4, device="neuron")  # allocated on s
    assert torch.neuron.current_stream() == torch.neuron.default_stream()
    other = torch.neuron.Stream(device=1)
    with torch.neuron.stream(other):
        assert torch.neuron.current_device() == 1
        assert torch.neuron.current_stream(1) == other
    assert torch.neuron.current_device() == 0
    assert torch.neuron.current_stream(1) == torch.neuron.default_stream(1)
    assert x.sum().item() == 4


def test_set_stream_and_torch_stream():
    s = torch.Stream(device="neuron", priority=-1)
    torch.neuron.set_stream(s)
    assert torch.neuron.current_stream() == s
    torch.neuron.set_stream(torch.neuron.default_stream())
    with torch.Stream(device="neuron") as t:
        assert torch.accelerator.current_stream() == t


def test_events_order_streams():
    side = torch.neuron.Stream()
    x = torch.zeros(1 << 20, device="neuron")
    with torch.neuron.stream(side):
        side.wait_stream(torch.neuron.default_stream())  # x's zeros first
        x.fill_(2)
        ev = side.record_event()
    torch.neuron.current_stream().wait_event(ev)
    assert x.sum().item() == 2 * (1 << 20)
    assert ev.query()
    ev.synchronize()
    assert side.query()
    side.synchronize()


def test_event_timing_and_flags():
    start = torch.neuron.Event(enable_timing=True)
    end = torch.Event(device="neuron", enable_timing=True)
    assert isinstance(start, torch.neuron.Event) and isinstance(end, torch.neuron.Event)
    start.record()
    torch.ones(1 << 22, device="neuron").mul(2)
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) > 0
    untimed = torch.neuron.Event()
    untimed.record()
    with pytest.raises((ValueError, RuntimeError), match="enable_timing|timing enabled"):
        start.elapsed_time(untimed)
    assert torch.neuron.Event().query()  # never recorded counts as complete


def test_record_stream_keeps_block_from_early_reuse():
    side = torch.neuron.Stream()
    x = torch.empty(1000, device="neuron")
    ptr = x.data_ptr()
    x.record_stream(side)
    del x
    side.synchronize()
    y = torch.empty(1000, device="neuron")
    assert y.data_ptr() == ptr  # reusable once the other stream passed the free


@pytest.mark.parametrize(
    "env",
    [{}, {"TORCH_NEURONX_EMU_QUEUE": "thread"}, {"TORCH_NEURONX_EMU_QUEUE": "thread", "NEURON_LAUNCH_BLOCKING": "1"}],
    ids=["inline", "thread", "thread-blocking"],
)
def test_ordering_contracts_in_every_queue_mode(env):
    assert run_ok("streams_ordering", env=env).split() == ["OK", "1048576.0", "True", "-1"]


@pytest.mark.parametrize("env", [{}, {"TORCH_NEURONX_EMU_QUEUE": "thread"}], ids=["inline", "thread"])
def test_streams_waiting_for_each_other_never_hang(env):
    # Found by the collective-sequence fuzzer: in thread mode, destroying the
    # event wait_stream records freed it under the stream still waiting for
    # it, which hung within ten rounds (docs/develop.md).
    assert run_ok("streams_wait_ping_pong", env=env, timeout=90).split() == ["rounds", "300"]


def test_synchronize_device():
    torch.ones(10, device="neuron:1")
    torch.neuron.synchronize(1)
    torch.neuron.synchronize("neuron:1")
    torch.neuron.synchronize()

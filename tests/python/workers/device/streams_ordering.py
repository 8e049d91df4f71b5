"""A pinned copy queued on a side stream, an event, a copy back on main:
ordered in every queue mode; event timing and stream priority (test_streams.py)."""

import torch

side = torch.neuron.Stream()
main = torch.neuron.current_stream()
host = torch.arange(1 << 22, dtype=torch.float32).pin_memory()
dev = torch.empty(1 << 22, device="neuron")
for trial in range(5):
    with torch.neuron.stream(side):
        dev.copy_(host, non_blocking=True)  # queued on the side stream
        ev = side.record_event()
    main.wait_event(ev)
    back = torch.empty_like(host).pin_memory()
    back.copy_(dev, non_blocking=True)  # queued on main, after the event
    main.synchronize()
    assert torch.equal(back, host), trial
    host += 1
e0 = torch.neuron.Event(enable_timing=True)
e1 = torch.neuron.Event(enable_timing=True)
e0.record()
x = torch.ones(1 << 20, device="neuron").sum().item()
e1.record()
e1.synchronize()
print("OK", x, e0.elapsed_time(e1) >= 0, torch.neuron.Stream(priority=-1).priority)

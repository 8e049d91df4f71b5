"""A short tour of the neuron device on the embedded NeuronCore emulator.

Run: make device-demo   (or .venv/bin/python examples/device_demo.py)

It lists the emulated NeuronCores, trains a tiny MLP on neuron:0 for a few
steps, overlaps a copy on a side stream with an event, shows an out-of-memory
error and the recovery from it, and reports the memory statistics and which
ops still ran through the copying CPU fallback.
"""

import time
import warnings

import torch

import torch_neuronx
from torch_neuronx._info import info_text


def section(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 66 - len(title)))


def main() -> None:
    warnings.filterwarnings("ignore", message="neuron: ")  # counted and shown at the end instead
    section("devices (python -m torch_neuronx info)")
    print(info_text(), end="")

    section("a tiny MLP trained on neuron:0")
    torch.manual_seed(0)
    device = torch.device("neuron", 0)
    x = torch.randn(256, 16)
    y = (x[:, :1] * 2 - x[:, 1:2]).tanh()
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    xd, yd = x.to(device), y.to(device)
    start = time.perf_counter()
    for step in range(30):
        loss = torch.nn.functional.mse_loss(model(xd), yd)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 0 or step == 29:
            print(f"step {step:2d}  loss {loss.item():.4f}  (params on {next(model.parameters()).device})")
    print(f"30 steps in {time.perf_counter() - start:.2f} s")

    section("streams and events")
    side = torch.neuron.Stream(priority=-1)
    host = torch.randn(1 << 22).pin_memory()
    with torch.neuron.stream(side):
        dev = torch.empty(host.shape, device=device)
    for label in ("first (fresh device pages fault in)", "second"):
        start_ev, end_ev = torch.neuron.Event(enable_timing=True), torch.neuron.Event(enable_timing=True)
        with torch.neuron.stream(side):
            start_ev.record()
            dev.copy_(host, non_blocking=True)
            end_ev.record()
        torch.neuron.current_stream().wait_event(end_ev)
        end_ev.synchronize()
        ms = start_ev.elapsed_time(end_ev)
        print(
            f"16 MiB pinned host-to-device copy on a high-priority stream, {label}: {ms:.2f} ms "
            f"({host.nbytes / ms / 1e6:.1f} GB/s)"
        )
    print(f"equal after the copies: {torch.equal(dev.cpu(), host)}")

    section("out of memory, and recovery")
    total = torch.neuron.get_device_properties(1).total_memory
    try:
        torch.empty(total + 1, dtype=torch.uint8, device="neuron:1")
    except torch.OutOfMemoryError as e:
        print(f"torch.OutOfMemoryError: {str(e).splitlines()[0][:200]}...")
    ok = torch.ones(1024, device="neuron:1")
    print(f"the device still works: sum = {ok.sum().item():.0f}")

    section("memory and fallbacks")
    print(torch.neuron.memory_summary(0), end="")
    fallbacks = torch_neuronx.get_fallback_ops()
    native = {k: v for k, v in torch_neuronx.get_executed_ops().items() if k not in fallbacks}
    print(
        f"native op runs: {sum(native.values())} ({len(native)} ops); "
        f"CPU-fallback runs: {sum(fallbacks.values())} ({len(fallbacks)} ops)"
    )
    top = sorted(fallbacks.items(), key=lambda kv: -kv[1])[:8]
    print("most frequent fallbacks: " + ", ".join(f"{k} x{v}" for k, v in top))


if __name__ == "__main__":
    main()

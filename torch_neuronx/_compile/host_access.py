"""How compiled graphs reach device memory. Inductor's generated C++ kernels
run on the host, on the raw pointers of neuron buffers: that needs a device
whose memory the host addresses (runtime/NeuronHostAccess.h decides, for the
whole project). The generated wrapper calls `_C._before_host_kernels(index)`
first (bindings/CompileBindings.cpp): it waits for the eager work that
produced the inputs, and refuses a device the host cannot address. On such
a device the `neuron` backend does not generate host kernels at all: it runs
the graph op by op, each op staging its device bytes through host copies
(counted by `torch_neuronx.host_staging_stats()` and, per graph, in `get_dynamo_metrics()["host_staged_graphs"]`)."""

import torch

import torch_neuronx._C as _C


def addressable(device: int | None = None) -> bool:
    """Whether the host may run kernels on this neuron device's memory."""
    return _C._host_addressable(torch.neuron.current_device() if device is None else device)


def graph_devices(example_inputs) -> set[int]:
    """The neuron devices of a graph's tensor inputs."""
    return {t.device.index for t in example_inputs if isinstance(t, torch.Tensor) and t.device.type == "neuron"}

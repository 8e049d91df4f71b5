"""Dynamo's device interface for neuron: torch.neuron's calls under the names
dynamo and Inductor use for every device."""

import os
from types import SimpleNamespace

import torch
from torch._dynamo.device_interface import DeviceInterface


class _Worker:
    @staticmethod
    def set_device(device: int) -> None:
        torch.neuron.set_device(device)

    @staticmethod
    def current_device() -> int:
        return torch.neuron.current_device()

    @staticmethod
    def get_device_properties(device=None):
        return NeuronInterface.get_device_properties(device)


class NeuronInterface(DeviceInterface):
    device = torch.neuron.device
    Event = torch.neuron.Event
    Stream = torch.neuron.Stream
    Worker = _Worker

    current_device = staticmethod(torch.neuron.current_device)
    set_device = staticmethod(torch.neuron.set_device)
    device_count = staticmethod(torch.neuron.device_count)
    is_available = staticmethod(torch.neuron.is_available)
    synchronize = staticmethod(torch.neuron.synchronize)
    current_stream = staticmethod(torch.neuron.current_stream)
    set_stream = staticmethod(torch.neuron.set_stream)

    @staticmethod
    def get_raw_stream(device_index: int) -> int:
        return 0  # generated kernels run on the host, in order with the caller (see inductor_backend)

    @staticmethod
    def get_device_properties(device=None):
        # The emulator's kernels run on host threads: Inductor sizes its
        # parallel work by multi_processor_count.
        props = torch.neuron.get_device_properties(device)
        return SimpleNamespace(
            name=props.name, total_memory=props.total_memory, multi_processor_count=os.cpu_count() or 1
        )

    @staticmethod
    def get_compute_capability(device=None) -> str:
        return "neuron-emu"

    @staticmethod
    def is_bf16_supported(including_emulation: bool = False) -> bool:
        return True

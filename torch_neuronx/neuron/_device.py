"""Devices: count, selection, properties, synchronization, runtime state."""

from __future__ import annotations

import dataclasses
from typing import Any

import torch

from .. import _C

_DeviceLike = torch.device | str | int | None


def _get_device_index(device: _DeviceLike, optional: bool = True) -> int:
    """The index of a neuron device-like value; the current device for None/'neuron'."""
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type != "neuron":
            raise ValueError(f"expected a neuron device, got {device}")
        device = device.index
    if device is None:
        if not optional:
            raise ValueError("a neuron device index is required here")
        return current_device()
    if not isinstance(device, int):
        raise TypeError(f"a neuron device is an int, str or torch.device, got {type(device).__name__}")
    return device


def is_available() -> bool:
    """True when at least one NeuronCore (emulated or real) is visible. Never raises."""
    return _C._device_count() > 0


def device_count() -> int:
    """Visible NeuronCores (logical cores after NEURON_RT_VISIBLE_CORES / NUM_CORES); 0 if none."""
    return _C._device_count()


def is_initialized() -> bool:
    """True once the runtime started (first allocation, stream or init())."""
    return _C._is_initialized()


def _is_in_bad_fork() -> bool:
    return _C._is_in_bad_fork()


def _lazy_init() -> None:
    _C._lazy_init()


def init() -> None:
    """Starts the runtime now instead of on first use."""
    _lazy_init()


def current_device() -> int:
    return _C._current_device()


def set_device(device: _DeviceLike) -> None:
    """Makes ``device`` current for this thread. Raises RuntimeError for an index out of range."""
    index = _get_device_index(device)
    if index >= 0:
        _C._set_device(index)


class device:
    """Context manager that makes a neuron device current, then restores the previous one."""

    def __init__(self, device: Any):
        self.idx = _get_device_index(device, optional=True) if device is not None else -1
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev_idx = _C._exchange_device(self.idx)

    def __exit__(self, *args):
        if self.idx >= 0:
            _C._exchange_device(self.prev_idx)
        return False


class device_of(device):
    """Context manager that makes the device of a tensor current (no-op for CPU tensors)."""

    def __init__(self, obj: torch.Tensor):
        super().__init__(obj.get_device() if obj.device.type == "neuron" else None)


@dataclasses.dataclass(frozen=True)
class _NeuronDeviceProperties:
    name: str
    total_memory: int
    logical_nc_config: int
    physical_core: int
    host_addressable: bool

    def __repr__(self) -> str:
        return (
            f"_NeuronDeviceProperties(name='{self.name}', total_memory={self.total_memory >> 20}MB, "
            f"logical_nc_config={self.logical_nc_config}, physical_core={self.physical_core})"
        )


def get_device_properties(device: _DeviceLike = None) -> _NeuronDeviceProperties:
    return _NeuronDeviceProperties(*_C._get_device_properties(_get_device_index(device)))


def get_device_name(device: _DeviceLike = None) -> str:
    return get_device_properties(device).name


def get_device_capability(device: _DeviceLike = None) -> tuple[int, int]:
    """NeuronCore generation as (major, minor): (3, 0) for Trainium2's NeuronCore-v3."""
    get_device_properties(device)  # validates the index
    return (3, 0)


def synchronize(device: _DeviceLike = None) -> None:
    """Waits for all work queued on every stream of the device."""
    _C._synchronize(_get_device_index(device))


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return True


def get_amp_supported_dtype() -> list[torch.dtype]:
    return [torch.bfloat16, torch.float16]

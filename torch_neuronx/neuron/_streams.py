"""Streams and events, as ``torch.Stream``/``torch.Event`` subclasses (torch.cuda's API)."""

from __future__ import annotations

import torch

from .. import _C
from ._device import _DeviceLike, _get_device_index


def _wrap(s: torch.Stream) -> Stream:
    return Stream(stream_id=s.stream_id, device_index=s.device_index, device_type=s.device_type)


class Stream(torch.Stream):
    """An in-order queue of work on one NeuronCore.

    ``Stream(device=None, priority=0)``: a stream from the device's pool;
    ``priority < 0`` picks the high-priority pool, as in CUDA.
    """

    def __new__(cls, device: _DeviceLike = None, priority: int = 0, **kwargs):
        if {"stream_id", "device_index", "device_type"} <= kwargs.keys():
            return super().__new__(cls, **kwargs)
        index = _get_device_index(device)
        return super().__new__(cls, device=torch.device("neuron", index), priority=priority)

    @property
    def priority(self) -> int:
        return _C._stream_priority(self.stream_id, self.device_index)

    def __repr__(self) -> str:
        return f"torch.neuron.Stream(device=neuron:{self.device_index} stream_id={self.stream_id})"


class _EventMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, torch.Event) and obj.device.type == "neuron"


class Event(metaclass=_EventMeta):
    """A marker in a stream, for ordering across streams and for timing.

    ``torch.neuron.Event(...)`` returns a ``torch.Event`` on a neuron device:
    torch's C++ event methods (``elapsed_time``) accept only that exact type.
    ``isinstance(e, torch.neuron.Event)`` holds for any neuron ``torch.Event``.
    """

    def __new__(
        cls, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False, device: _DeviceLike = None
    ) -> torch.Event:
        if interprocess:
            raise NotImplementedError("interprocess neuron events are not supported")
        index = _get_device_index(device)
        return torch.Event(torch.device("neuron", index), enable_timing=enable_timing, blocking=blocking)


def current_stream(device: _DeviceLike = None) -> Stream:
    return _wrap(torch.accelerator.current_stream(torch.device("neuron", _get_device_index(device))))


def default_stream(device: _DeviceLike = None) -> Stream:
    s = current_stream(device)
    return Stream(stream_id=0, device_index=s.device_index, device_type=s.device_type)


def set_stream(stream: torch.Stream) -> None:
    """Makes ``stream`` current (and its device the current device)."""
    if stream is not None:
        torch.accelerator.set_stream(stream)


class StreamContext:
    """Selects a stream (and its device) inside a ``with`` block, restoring both after."""

    def __init__(self, stream: torch.Stream | None):
        self.stream = stream
        self.prev_device = -1
        self.prev_stream: torch.Stream | None = None
        self.prev_stream_on_dst: torch.Stream | None = None

    def __enter__(self):
        if self.stream is None:
            return self
        self.prev_device = _C._current_device()
        self.prev_stream = torch.accelerator.current_stream(torch.device("neuron", self.prev_device))
        if self.stream.device_index != self.prev_device:
            self.prev_stream_on_dst = torch.accelerator.current_stream(self.stream.device)
        torch.accelerator.set_stream(self.stream)
        return self

    def __exit__(self, *args):
        if self.stream is None:
            return False
        if self.prev_stream_on_dst is not None:
            torch.accelerator.set_stream(self.prev_stream_on_dst)
        torch.accelerator.set_stream(self.prev_stream)  # also restores the device
        return False


def stream(stream: torch.Stream | None) -> StreamContext:
    return StreamContext(stream)

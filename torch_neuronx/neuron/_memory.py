"""Memory of the caching allocator, with ``torch.cuda``'s function names (``torch.neuron.memory``)."""

from __future__ import annotations

from typing import Any

import torch

from .. import _C
from ._device import _DeviceLike, _get_device_index
from ._memory_history import _dump_snapshot, _record_memory_history, _snapshot  # noqa: F401  (torch.neuron.memory.*)


def empty_cache() -> None:
    """Returns every cached, unused block to the device (memory_reserved drops)."""
    _C._empty_cache()


def memory_stats(device: _DeviceLike = None) -> dict[str, Any]:
    """CUDA-style statistics: ``allocated_bytes.all.current``, ``reserved_bytes.all.peak``, ..."""
    return torch.accelerator.memory_stats(torch.device("neuron", _get_device_index(device)))


def memory_allocated(device: _DeviceLike = None) -> int:
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device: _DeviceLike = None) -> int:
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device: _DeviceLike = None) -> int:
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device: _DeviceLike = None) -> int:
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def reset_peak_memory_stats(device: _DeviceLike = None) -> None:
    torch.accelerator.reset_peak_memory_stats(torch.device("neuron", _get_device_index(device)))


def reset_max_memory_allocated(device: _DeviceLike = None) -> None:
    reset_peak_memory_stats(device)


def reset_accumulated_memory_stats(device: _DeviceLike = None) -> None:
    torch.accelerator.reset_accumulated_memory_stats(torch.device("neuron", _get_device_index(device)))


def mem_get_info(device: _DeviceLike = None) -> tuple[int, int]:
    """(free, total) bytes of the device's HBM; cached blocks count as used."""
    return tuple(_C._mem_get_info(_get_device_index(device)))


def _fmt(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    return str(n)


def memory_summary(device: _DeviceLike = None, abbreviated: bool = False) -> str:
    """A table of the allocator's statistics, like ``torch.cuda.memory_summary``."""
    index = _get_device_index(device)
    stats = memory_stats(index)
    free, total = mem_get_info(index)
    rows = [
        ("Allocated memory", "allocated_bytes", True),
        ("Active memory", "active_bytes", True),
        ("Requested memory", "requested_bytes", True),
        ("Reserved memory", "reserved_bytes", True),
        ("Non-releasable memory", "inactive_split_bytes", True),
        ("Allocations", "allocation", False),
        ("Active allocs", "active", False),
        ("Reserved segments", "segment", False),
    ]
    width = 76
    lines = [
        "=" * width,
        f" neuron:{index} memory summary (caching allocator)".ljust(width),
        "-" * width,
        f" {'Metric':<24}{'Cur Usage':>12}{'Peak Usage':>12}{'Tot Alloc':>14}{'Tot Freed':>14}",
        "-" * width,
    ]
    for label, key, is_bytes in rows:
        vals = [stats.get(f"{key}.all.{k}", 0) for k in ("current", "peak", "allocated", "freed")]
        shown = [_fmt(v) if is_bytes else str(v) for v in vals]
        lines.append(f" {label:<24}{shown[0]:>12}{shown[1]:>12}{shown[2]:>14}{shown[3]:>14}")
    lines += [
        "-" * width,
        f" Device HBM: {_fmt(total - free)} in use of {_fmt(total)}; "
        f"OOMs: {stats.get('num_ooms', 0)}, retries: {stats.get('num_alloc_retries', 0)}",
        "=" * width,
    ]
    return "\n".join(lines) + "\n"

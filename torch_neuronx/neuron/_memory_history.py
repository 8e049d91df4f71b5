"""Memory snapshots, as ``torch.cuda.memory``'s: ``_record_memory_history``, ``_snapshot``, ``_dump_snapshot``.

The snapshot has CUDA's format (``segments``, ``device_traces``), so
``torch.cuda._memory_viz`` and https://pytorch.org/memory_viz read it. The
recorder is in csrc/bindings/MemoryHistoryBindings.cpp, fed by the caching
allocator's observer hook (csrc/runtime/NeuronAllocatorObserver.h).
"""

from __future__ import annotations

import atexit
import pickle
import sys
from typing import Any, Literal

from .. import _C
from ._device import _DeviceLike, _get_device_index

_atexit_registered = False


def _stop_at_exit() -> None:
    # Threads that free device memory while Python finalizes (autograd's device
    # threads) must not take the GIL to gather a stack then.
    _C._record_memory_history(None, None, "python", 0)


def _record_memory_history(
    enabled: Literal["state", "all"] | bool | None = "all",
    context: Literal["state", "alloc", "all"] | None = "all",
    stacks: Literal["python", "all"] = "all",
    max_entries: int = sys.maxsize,
    device: _DeviceLike = None,
    clear_history: bool = False,
) -> None:
    """Starts (or, with ``enabled=None``, stops) recording what the neuron caching allocator does.

    As ``torch.cuda.memory._record_memory_history``:

    - ``enabled``: ``"all"`` keeps a history of every alloc/free (the last
      ``max_entries`` per device) and the stacks of live blocks; ``"state"``
      only the stacks of live blocks; ``None`` stops and drops the history.
    - ``context``: which events get a stack: ``"state"`` live blocks only,
      ``"alloc"`` also the history's allocations, ``"all"`` also its frees;
      ``None`` none.
    - ``stacks``: ``"python"`` (Python and TorchScript frames) or ``"all"``
      (also C++ frames, slower to gather and to symbolize).

    Every neuron device is recorded; ``device`` is checked and otherwise
    ignored, as CUDA does.
    """
    global _atexit_registered
    if isinstance(enabled, bool):  # CUDA's legacy form
        enabled = "all" if enabled else None
    if device is not None:
        _get_device_index(device)
    if max_entries < 0:
        raise ValueError(f"max_entries must be >= 0, got {max_entries}")
    _C._record_memory_history(enabled, context, stacks, min(max_entries, sys.maxsize), clear_history)
    if enabled is not None and not _atexit_registered:
        atexit.register(_stop_at_exit)
        _atexit_registered = True


def _snapshot(device: _DeviceLike = None) -> dict[str, Any]:
    """The allocator's state now and the recorded history, as ``torch.cuda.memory._snapshot()``.

    ``segments``: every device's segments (``device``, ``address``,
    ``total_size``, ``stream``, ``segment_type``, ``allocated_size``,
    ``active_size``, ``requested_size``) with their ``blocks`` (``address``,
    ``size``, ``requested_size``, ``state``: ``active_allocated``,
    ``active_pending_free`` or ``inactive``, ``frames`` of the allocation if it
    was recorded). ``device_traces``: per device, the history's entries
    (``action``: ``alloc``, ``free_requested``, ``free_completed``,
    ``segment_alloc``, ``segment_free``; ``addr``, ``size`` (requested bytes;
    a segment's bytes), ``stream``, ``time_us``, ``frames``: a list of
    ``{filename, line, name}``, innermost first). ``device`` is ignored: the
    snapshot covers all devices, as CUDA's.
    """
    return _C._memory_snapshot()


def _dump_snapshot(filename: str = "dump_snapshot.pickle") -> None:
    """Pickles ``_snapshot()`` to ``filename``, for https://pytorch.org/memory_viz or ``torch.cuda._memory_viz``."""
    snapshot = _snapshot()
    with open(filename, "wb") as f:
        pickle.dump(snapshot, f)

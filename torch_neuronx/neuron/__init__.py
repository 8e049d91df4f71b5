"""``torch.neuron``: the device module, with ``torch.cuda``'s names where the concept exists."""

import torch

from . import _memory as memory  # torch.neuron.memory, as torch.cuda.memory (snapshots: _record_memory_history...)
from ._device import (
    _get_device_index as _get_device_index,  # the private names torch calls on a device module
)
from ._device import (
    _is_in_bad_fork as _is_in_bad_fork,
)
from ._device import (
    _lazy_init as _lazy_init,
)
from ._device import (
    current_device,
    device,
    device_count,
    device_of,
    get_amp_supported_dtype,
    get_device_capability,
    get_device_name,
    get_device_properties,
    init,
    is_available,
    is_bf16_supported,
    is_initialized,
    set_device,
    synchronize,
)
from ._memory import (
    empty_cache,
    max_memory_allocated,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_reserved,
    memory_stats,
    memory_summary,
    reset_accumulated_memory_stats,
    reset_max_memory_allocated,
    reset_peak_memory_stats,
)
from ._random import (
    get_rng_state,
    get_rng_state_all,
    initial_seed,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_rng_state,
    set_rng_state_all,
)
from ._streams import Event, Stream, StreamContext, current_stream, default_stream, set_stream, stream

__all__ = [
    "Event",
    "Stream",
    "StreamContext",
    "current_device",
    "current_stream",
    "default_generators",
    "default_stream",
    "device",
    "device_count",
    "device_of",
    "empty_cache",
    "get_amp_supported_dtype",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
    "get_rng_state",
    "get_rng_state_all",
    "init",
    "initial_seed",
    "is_available",
    "is_bf16_supported",
    "is_initialized",
    "manual_seed",
    "manual_seed_all",
    "max_memory_allocated",
    "max_memory_reserved",
    "mem_get_info",
    "memory",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "memory_summary",
    "reset_accumulated_memory_stats",
    "reset_max_memory_allocated",
    "reset_peak_memory_stats",
    "seed",
    "seed_all",
    "set_device",
    "set_rng_state",
    "set_rng_state_all",
    "set_stream",
    "stream",
    "synchronize",
]


def __getattr__(name: str):
    if name == "default_generators":  # lazy: creating them needs the device count
        from ._random import _all_generators

        return _all_generators()
    if name == "_initialized":  # as torch.cuda._initialized: torch.utils.checkpoint saves
        return is_initialized()  # the device's RNG state only when this is true
    if name in ("Scheduling", "PythonWrapperCodegen", "CppWrapperCodegen"):  # asked by Inductor
        from .._compile import codegen_class

        return codegen_class(name)
    raise AttributeError(f"module 'torch.neuron' has no attribute '{name}'")


del torch

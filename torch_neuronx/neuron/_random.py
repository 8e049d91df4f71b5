"""Random number generators: one Philox-style (seed, offset) generator per device."""

from __future__ import annotations

from collections.abc import Iterable

import torch

from .. import _C
from ._device import _DeviceLike, _get_device_index, device_count

_generators: dict[int, torch.Generator] = {}


def _generator(device: _DeviceLike = None) -> torch.Generator:
    index = _get_device_index(device)
    gen = _generators.get(index)
    if gen is None:
        gen = _generators[index] = _C._default_generator(index)
    return gen


def _all_generators() -> tuple[torch.Generator, ...]:
    return tuple(_generator(i) for i in range(device_count()))


def manual_seed(seed: int) -> None:
    """Seeds the current device's generator."""
    _generator().manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    """Seeds every device's generator (torch.manual_seed calls this)."""
    for gen in _all_generators():
        gen.manual_seed(int(seed))


def seed() -> None:
    """Seeds the current device's generator with a non-deterministic number."""
    _generator().seed()


def seed_all() -> None:
    s = _generator().seed()
    for gen in _all_generators():
        gen.manual_seed(s)


def initial_seed() -> int:
    return _generator().initial_seed()


def get_rng_state(device: _DeviceLike = "neuron") -> torch.Tensor:
    """The generator state: a uint8 CPU tensor of 16 bytes, the seed then the offset."""
    return _generator(device).get_state()


def set_rng_state(new_state: torch.Tensor, device: _DeviceLike = "neuron") -> None:
    _generator(device).set_state(new_state.clone())


def get_rng_state_all() -> list[torch.Tensor]:
    return [gen.get_state() for gen in _all_generators()]


def set_rng_state_all(new_states: Iterable[torch.Tensor]) -> None:
    for index, state in enumerate(new_states):
        set_rng_state(state, index)

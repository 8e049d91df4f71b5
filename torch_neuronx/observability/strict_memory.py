"""Strict mode's memory check: each device's peak allocation (PyTorch's
max_memory_allocated) against one logical NeuronCore's HBM on Trainium at the
LNC in force, at each optimizer step, at the end of a strict block and at exit."""

from __future__ import annotations

import torch

from .. import trainium
from . import strict_findings as _s

_peaks: dict[int, int] = {}
_reported: set[int] = set()


def core_hbm(device: int) -> tuple[int, int, str]:
    """(bytes, LNC, generation) of one logical NeuronCore's HBM on Trainium for
    neuron device `device` at the LNC in force (trn2: 24 GiB at LNC=2, 12 at 1)."""
    props = torch.neuron.get_device_properties(device)
    core = next((c for c in trainium.CORES.values() if props.name.startswith(c.generation)), trainium.TRN2)
    lnc = max(1, props.logical_nc_config)
    return core.hbm_bytes_per_chip // max(1, core.cores_per_chip // lnc), lnc, core.generation


def _read_peaks() -> None:
    neuron = torch.neuron
    if neuron.is_initialized() and not neuron._is_in_bad_fork():
        for d in range(neuron.device_count()):
            _peaks[d] = max(_peaks.get(d, 0), neuron.max_memory_allocated(d))


def check_memory(where=None, may_raise: bool = True) -> None:
    """A memory finding for each device whose peak allocation so far (PyTorch's
    max_memory_allocated) is over one logical core's HBM, once per device."""
    if _s.current_mode() == "off":
        return
    _read_peaks()
    for d, peak in sorted(_peaks.items()):
        limit, lnc, generation = core_hbm(d)
        if peak > limit and d not in _reported:
            _reported.add(d)
            _s.record(
                "memory",
                f"neuron:{d}",
                f"peak allocation {peak / 2**30:.2f} GiB is over the "
                f"{limit / 2**30:.0f} GiB HBM of one {generation} logical core at LNC={lnc}",
                where=where or _s.locate(),
                may_raise=may_raise,
            )


def reset_memory() -> None:
    _peaks.clear()
    _reported.clear()


def peak_memory() -> list[dict]:
    """Per neuron device used: the peak allocation (bytes) and one core's HBM at its LNC."""
    _read_peaks()
    out = []
    for d, peak in sorted(_peaks.items()):
        if peak == 0:
            continue
        limit, lnc, generation = core_hbm(d)
        out.append(
            {"device": f"neuron:{d}", "peak_bytes": peak, "core_hbm_bytes": limit, "lnc": lnc, "generation": generation}
        )
    return out

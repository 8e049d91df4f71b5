"""Which NeuronCore generation a kernel is checked against.

`nki.jit(platform_target=...)` or `NEURON_PLATFORM_TARGET_OVERRIDE` names it
with AWS's spellings (`trn1`/`inf2`/`gen2`, `trn2`/`gen3`, `trn3`/`gen4`);
Trainium2 is the default. The numbers themselves live in `torch_neuronx.trainium`
(the one table)."""

import os

from ... import trainium
from ..errors import NKIError

_ALIASES = {
    "trn1": "trn1",
    "inf2": "trn1",
    "gen2": "trn1",
    "trn2": "trn2",
    "gen3": "trn2",
    "trn3": "trn3",
    "gen4": "trn3",
}


def resolve_target(platform_target: str | None) -> str:
    name = os.environ.get("NEURON_PLATFORM_TARGET_OVERRIDE") or platform_target or "trn2"
    key = str(name).lower()
    if key not in _ALIASES:
        raise NKIError(
            f"platform target {name!r} is not one of {sorted(_ALIASES)} "
            f"(set by platform_target= or NEURON_PLATFORM_TARGET_OVERRIDE)"
        )
    return _ALIASES[key]


def for_target(target: str) -> "trainium.NeuronCore":
    return trainium.CORES[target]

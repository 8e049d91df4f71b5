"""Trainium3's microscaling (MX) instructions, `nisa.quantize_mx` and
`nisa.nc_matmul_mx`: on an earlier target each is refused as AWS's compiler
refuses it (NeuronCore-v4 and newer only); on trn3 the emulator does not
model MX yet, and says so."""

from __future__ import annotations

from ..errors import NKIUnsupported
from ..trace import state


def _mx(name: str):
    def call(*args, **kwargs):
        tr = state.require(f"nisa.{name}")
        if tr.target != "trn3":
            raise tr.error(
                f"nisa.{name} is available only on NeuronCore-v4 and newer (Trainium3); this kernel is traced for "
                f"{tr.target}: pass platform_target='trn3' (or NEURON_PLATFORM_TARGET_OVERRIDE=trn3)"
            )
        raise NKIUnsupported(
            f"nisa.{name} on trn3 is not supported by the NKI emulator yet (docs/nki.md lists what is)"
        )

    call.__name__ = call.__qualname__ = name
    return call


quantize_mx = _mx("quantize_mx")
nc_matmul_mx = _mx("nc_matmul_mx")

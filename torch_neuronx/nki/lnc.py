"""`nki.lnc`: the two physical cores of a logical core (LNC=2) exchanging
data and waiting for each other, as AWS's newer releases name the calls
(`nki.isa.sendrecv` and `nki.isa.core_barrier` are the same functions;
`pipe_id` is accepted and ignored, as AWS's compiler ignores it)."""

from .errors import not_yet
from .isa.lnc import core_barrier, sendrecv

sendrecv_compute = not_yet("nki.lnc.sendrecv_compute")

__all__ = ["core_barrier", "sendrecv", "sendrecv_compute"]

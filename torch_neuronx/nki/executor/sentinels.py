"""What fresh memory holds before a kernel writes it, as AWS's simulator
hands it out: NaN in floats, the lowest value in integers. HBM outputs and
scratch get them per call (executor/device.py), so an element a kernel never
writes shows in its result; on-chip tiles when the plan allocates them (the
trace already refuses what reads unwritten SBUF and PSUM, trace/state.py).
"""

from __future__ import annotations

import torch


def fill_sentinel(t: torch.Tensor) -> torch.Tensor:
    if t.numel():
        if t.dtype.is_floating_point:
            t.fill_(float("nan"))
        elif t.dtype != torch.bool:
            t.fill_(torch.iinfo(t.dtype).min)
    return t

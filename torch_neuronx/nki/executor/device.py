"""One call of a kernel: a plan bound to the memory of its arguments and run.

CPU tensors (the simulator) are used as they are; neuron tensors through host
views of their device memory, after the work queued on the current stream
that produced them, or, where the host cannot address the device, through
staged copies of which the written ones (outputs, mutated arguments) are
copied back. Outputs are allocated per call on the arguments' device,
holding sentinels until the kernel writes them (`fill_sentinel`).
"""

from __future__ import annotations

import torch

from ... import _C
from .plan import Plan
from .sentinels import fill_sentinel


def map_outputs(x, fn):
    """fn applied to every leaf of a kernel's result (a buffer, or tuples, lists and dicts of them)."""
    if x is None:
        return None
    if isinstance(x, (tuple, list)):
        return type(x)(map_outputs(v, fn) for v in x)
    if isinstance(x, dict):
        return {k: map_outputs(v, fn) for k, v in x.items()}
    return fn(x)


def execute(plan: Plan, tensors, device, mutated):
    """Runs a plan on the arguments' memory; returns the outputs. `device` is
    the neuron device of the arguments, or None for CPU tensors; `mutated`
    are the positions (among the tensors) of the arguments the kernel writes."""
    if device is None:
        view, staged = (lambda t: t), False
    else:
        _C._wait_for_producers(device.index)
        staged = not _C._host_addressable(device.index)
        view = (lambda t: t.cpu()) if staged else _C._host_view
    fresh: dict = {}

    def new(b):
        t = fresh[b.id] = torch.empty(b.shape, dtype=b.dtype, device=device)
        return fill_sentinel(view(t))  # on the host view: the kernel's own memory traffic, no device op

    host = [view(t) for t in tensors]
    env = plan.bind(host, new)
    plan.run(env)
    if staged:
        for i in mutated:
            tensors[i].copy_(host[i])
        for bid, t in fresh.items():
            t.copy_(env[bid])
    return map_outputs(plan.outputs, lambda b: _result(b, fresh, tensors))


def _result(b, fresh, tensors):
    """The caller's tensor for an output buffer: a fresh output, an argument
    the kernel returns, or a reshape of either."""
    if b.parent is not None:
        return _result(b.parent, fresh, tensors).view(b.shape)
    if b.role == "arg":
        return tensors[b.index]
    return fresh[b.id]

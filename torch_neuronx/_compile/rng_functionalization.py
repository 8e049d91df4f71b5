"""Neuron support for the two higher-order ops AOT autograd uses to replay
random ops in recomputed regions (activation checkpointing under
torch.compile): `run_and_save_rng_state` (forward: save the generator state,
run the op) and `run_with_rng_state` (backward: run the op from the saved
state, then restore the state).

PyTorch implements them per dispatch key, and real tensors reach a
device-type switch (`impl_backend_select`, the BackendSelect kernel) that
knows cuda, cpu, hpu and xpu and raises "Backend not supported" for any other
device; `run_and_save_rng_state`'s fake-tensor and proxy-tracing rules call
the same switch. This module registers neuron's kernels (PrivateUse1) and
replaces each switch with one that routes neuron and defers to PyTorch's for
every other device."""

import torch
from torch._C import DispatchKey


def _save_state_and_run(op, *args, **kwargs):
    return torch.neuron.get_rng_state(), op(*args, **kwargs)


def _run_with_state(rng_state, op, *args, **kwargs):
    current = torch.neuron.get_rng_state()
    torch.neuron.set_rng_state(rng_state.cpu())
    try:
        return op(*args, **kwargs)
    finally:
        torch.neuron.set_rng_state(current)


def _route_neuron(hop, neuron_impl, leading: int) -> None:
    """Replaces the hop's `impl_backend_select` switch, both as its
    BackendSelect kernel (reached by real tensors) and, where its fake and
    proxy rules share it, in their closure cell. `leading` counts the
    arguments before the op's own (the op; the state and the op)."""
    from torch._higher_order_ops.utils import registered_hop_fake_fns
    from torch._prims.rng_prims import get_device

    pytorch_select = hop.py_kernels.get(DispatchKey.BackendSelect)
    if pytorch_select is None or getattr(pytorch_select, "routes_neuron", False):
        return  # no switch to extend (another torch), or already extended

    def select(*args, **kwargs):
        if get_device(args[leading:], kwargs) == "neuron":
            return neuron_impl(*args, **kwargs)
        return pytorch_select(*args, **kwargs)

    select.routes_neuron = True
    hop.py_kernels[DispatchKey.BackendSelect] = select
    getattr(hop, "_dispatch_cache", {}).clear()
    fake_rule = registered_hop_fake_fns.get(hop)
    if fake_rule is not None and "impl_backend_select" in fake_rule.__code__.co_freevars:
        fake_rule.__closure__[fake_rule.__code__.co_freevars.index("impl_backend_select")].cell_contents = select


def register() -> None:
    from torch._prims import rng_prims

    for hop, impl, leading in (
        (rng_prims.run_and_save_rng_state, _save_state_and_run, 1),
        (rng_prims.run_with_rng_state, _run_with_state, 2),
    ):
        if DispatchKey.PrivateUse1 not in hop.py_kernels:
            hop.py_impl(DispatchKey.PrivateUse1)(impl)
        _route_neuron(hop, impl, leading)

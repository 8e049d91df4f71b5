"""torch.multiprocessing for neuron tensors.

A neuron tensor sent to another process (an ``mp.Queue``, ``mp.Process`` or
``mp.spawn`` argument, a ``Pool`` task) arrives as a tensor over the same
device memory, as a CUDA tensor does through CUDA IPC: writes on either side
are visible to the other, and ``Module.share_memory()`` followed by training
in several processes (Hogwild) updates one set of parameters.

The contract is CUDA's: the sender's device work is finished when it sends;
the sender keeps the tensor alive while receivers may still want it (its
memory is not reused before every receiver has dropped its tensor, but the
receiver must get it before the sender exits to map it at all); a received
tensor cannot be sent on (send a ``clone()``); a storage alone cannot be sent.
``is_shared()`` answers False, as torch's check knows only CPU and CUDA.
"""

from __future__ import annotations

from multiprocessing.reduction import ForkingPickler

import torch
import torch.multiprocessing.reductions as torch_reductions

from . import _C


def _check_sendable(tensor: torch.Tensor) -> None:
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does "
            "not support crossing process boundaries. If you just want to transfer the data, call "
            "detach() on the tensor before serializing (e.g., putting it on the queue)."
        )
    torch.utils.hooks.warn_if_has_hooks(tensor)


def reduce_tensor(tensor: torch.Tensor):
    """ForkingPickler's reducer for torch.Tensor and Parameter: neuron tensors
    by handle, every other tensor as torch reduces it."""
    if tensor.device.type != "neuron" or tensor.layout != torch.strided or tensor.is_nested:
        return torch_reductions.reduce_tensor(tensor)
    _check_sendable(tensor)
    storage = tensor.untyped_storage()
    meta = (
        type(tensor),
        tuple(tensor.size()),
        tuple(tensor.stride()),
        tensor.storage_offset(),
        tensor.dtype,
        tensor.device.index,
        tensor.requires_grad,
    )
    if storage.nbytes() == 0:
        return rebuild_neuron_tensor, meta
    handle = (_C._share_storage(tensor), storage.nbytes())  # the HAL's handle: plain bytes
    return rebuild_neuron_tensor, meta + (handle,)


def rebuild_neuron_tensor(cls, size, stride, storage_offset, dtype, device, requires_grad, handle=None):
    """The receiver's side of reduce_tensor: maps the sender's memory."""
    if handle is None:
        t = torch.empty((0,), dtype=dtype, device=torch.device("neuron", device)).as_strided(size, stride)
    else:
        handle_bytes, nbytes = handle
        raw = _C._open_shared_storage(device, handle_bytes, nbytes)
        t = torch.empty((0,), dtype=dtype, device=raw.device).set_(raw.untyped_storage(), storage_offset, size, stride)
    if cls is torch.nn.Parameter:
        return torch.nn.Parameter(t, requires_grad=requires_grad)
    t.requires_grad = requires_grad
    return t


def reduce_storage(storage):
    if storage.device.type == "neuron":
        raise RuntimeError(
            "Cannot pickle a neuron storage for another process; send a neuron tensor "
            "(torch.empty(0, device='neuron').set_(storage)) instead"
        )
    return torch_reductions.reduce_storage(storage)


def install() -> None:
    """Registers the reducers (after torch.multiprocessing registered its own)."""
    for cls in (torch.Tensor, torch.nn.Parameter):
        ForkingPickler.register(cls, reduce_tensor)
    ForkingPickler.register(torch.UntypedStorage, reduce_storage)

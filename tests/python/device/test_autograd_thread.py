"""With the emulator, the backward of neuron tensors runs on the thread that
calls it, as a CPU tensor's does (torch_neuronx/_autograd_thread.py), and
TORCH_NEURONX_AUTOGRAD_THREAD=1 keeps PyTorch's device thread."""

import torch
from helpers.processes import run_python
from torch.utils.checkpoint import checkpoint


def test_backward_runs_on_the_calling_thread_by_default():
    res = run_python("autograd_backward_thread")
    assert res.returncode == 0 and res.stdout.split() == ["caller"], res.stderr[-2000:]


def test_the_setting_keeps_the_device_thread():
    res = run_python("autograd_backward_thread", env={"TORCH_NEURONX_AUTOGRAD_THREAD": "1"})
    assert res.returncode == 0 and res.stdout.split() == ["other"], res.stderr[-2000:]


def test_reentrant_checkpointing_matches_the_cpu():
    # Gradient checkpointing with use_reentrant=True (TRL's default through
    # Transformers) calls backward from inside a backward.
    torch.manual_seed(0)
    x = torch.randn(4, 8)
    grads = {}
    for device in ("cpu", "neuron"):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 8)).to(device)
        inp = x.to(device).detach().requires_grad_()
        checkpoint(model, inp, use_reentrant=True).square().sum().backward()
        grads[device] = [p.grad.cpu() for p in model.parameters()] + [inp.grad.cpu()]
    for a, b in zip(grads["cpu"], grads["neuron"]):
        torch.testing.assert_close(a, b)

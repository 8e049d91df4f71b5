"""The Hugging Face libraries' own detectors report Neuron (pinned versions)."""

import torch


def test_accelerate_detects_neuron():
    from accelerate.utils import is_neuron_available

    assert is_neuron_available()
    assert is_neuron_available(check_device=True)


def test_transformers_detects_neuron():
    from transformers.utils import is_torch_neuron_available

    assert is_torch_neuron_available()
    assert is_torch_neuron_available(check_device=True)


def test_diffusers_picks_neuron():
    from diffusers.utils.torch_utils import get_device

    assert get_device() == "neuron"


def test_kernels_selects_the_neuron_backend():
    from kernels.backends import Neuron, _backend

    backend = _backend()
    assert isinstance(backend, Neuron) and backend.name == "neuron"


def test_accelerate_state_uses_neuron():
    from accelerate import PartialState

    state = PartialState(cpu=False)
    assert state.device.type == "neuron"
    assert torch.ones(1, device=state.device).device.type == "neuron"

"""Fixtures of the Python tier. The helpers that start processes (workers,
ranks, torchrun) are in helpers/, the programs they run in workers/."""

import pytest
import torch

import torch_neuronx


@pytest.fixture(autouse=True)
def _clean_state():
    torch_neuronx.clear_op_tracking()
    yield
    torch.neuron.set_device(0)
    torch.neuron.synchronize(0)

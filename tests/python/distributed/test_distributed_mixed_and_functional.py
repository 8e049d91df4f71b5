"""The neuron backend beside gloo (`"cpu:gloo,neuron:neuron"`: CPU tensors go
to gloo, neuron tensors to this project's shared-memory transport), and
torch's functional collectives on neuron tensors, in real processes."""

import pytest
from helpers.dist_launch import launch_ok


@pytest.mark.parametrize("backend,world", [("neuron", 2), ("cpu:gloo,neuron:neuron", 2), ("cpu:gloo,neuron:neuron", 4)])
def test_functional_collectives_and_gloo_beside_neuron(backend, world, tmp_path):
    launch_ok("mixed_gloo_and_functional", world, tmp_path, expect="ok", args=[backend])

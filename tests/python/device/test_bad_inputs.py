"""Bad inputs give clear Python exceptions that name the value, never a crash."""

import pytest
import torch


def test_device_index_out_of_range():
    with pytest.raises(
        RuntimeError, match=r"Invalid device index neuron:99: 4 NeuronCores are visible \(indices 0-3\)"
    ):
        torch.empty(3, device=torch.device("neuron", 99))
    with pytest.raises(RuntimeError, match="neuron:7"):
        torch.ones(2).to("neuron:7")
    with pytest.raises(RuntimeError, match="neuron:4"):
        torch.neuron.set_device(4)
    assert torch.neuron.current_device() == 0
    with pytest.raises(RuntimeError, match="neuron:5"):
        torch.neuron.get_device_properties(5)
    with pytest.raises(RuntimeError, match="neuron:9"):
        torch.neuron.Stream(device=9)


def test_mixed_devices():
    a = torch.ones(3, device="neuron")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device.*neuron:0 and cpu"):
        a + torch.ones(3)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device.*neuron:0 and neuron:1"):
        a * torch.ones(3, device="neuron:1")
    assert torch.equal((a + torch.tensor(1.0)).cpu(), torch.full((3,), 2.0))  # 0-dim CPU scalar is allowed


def test_over_capacity():
    with pytest.raises(torch.OutOfMemoryError, match=r"neuron:1 out of memory: tried to allocate 25\.00 GiB"):
        torch.empty(25 * 2**30, dtype=torch.uint8, device="neuron:1")


def test_pinning_a_device_tensor_and_bad_layouts():
    with pytest.raises(RuntimeError, match="pin_memory=True for a neuron tensor"):
        torch.empty(3, device="neuron", pin_memory=True)


def test_wrong_types_for_device_module():
    with pytest.raises(ValueError, match="expected a neuron device"):
        torch.neuron.set_device("cpu")
    with pytest.raises(TypeError):
        torch.neuron.set_device(1.5)


def test_bad_random_arguments():
    with pytest.raises(RuntimeError, match="from=3 > to=1"):
        torch.empty(3, device="neuron").uniform_(3, 1)
    with pytest.raises(RuntimeError, match="p=1.5"):
        torch.empty(3, device="neuron").bernoulli_(1.5)

"""torch.save/torch.load of neuron tensors and modules, map_location both
ways, and safetensors loading onto neuron."""

import safetensors.torch
import torch


def test_save_load_keeps_device_and_values(tmp_path):
    x = torch.randn(4, 5).to("neuron:1")
    path = tmp_path / "t.pt"
    torch.save({"x": x, "n": 3}, path)
    back = torch.load(path)
    assert back["x"].device == torch.device("neuron", 1) and back["n"] == 3
    assert torch.equal(back["x"].cpu(), x.cpu())


def test_map_location_to_and_from_neuron(tmp_path):
    cpu = torch.arange(6.0).reshape(2, 3)
    torch.save(cpu, tmp_path / "cpu.pt")
    on_dev = torch.load(tmp_path / "cpu.pt", map_location="neuron:2")
    assert on_dev.device == torch.device("neuron", 2) and torch.equal(on_dev.cpu(), cpu)
    torch.save(on_dev, tmp_path / "dev.pt")
    assert torch.load(tmp_path / "dev.pt", map_location="cpu").device.type == "cpu"
    assert torch.load(tmp_path / "dev.pt", map_location=torch.device("neuron", 0)).device.index == 0


def test_module_state_dict_round_trip(tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.LayerNorm(8)).to("neuron")
    torch.save(model.state_dict(), tmp_path / "m.pt")
    fresh = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.LayerNorm(8)).to("neuron")
    fresh.load_state_dict(torch.load(tmp_path / "m.pt"))
    for a, b in zip(model.state_dict().values(), fresh.state_dict().values()):
        assert b.device.type == "neuron" and torch.equal(a.cpu(), b.cpu())
    torch.save(model, tmp_path / "whole.pt")
    whole = torch.load(tmp_path / "whole.pt", weights_only=False)
    assert next(whole.parameters()).device.type == "neuron"


def test_views_share_storage_after_load(tmp_path):
    base = torch.arange(10.0).to("neuron")
    torch.save({"base": base, "view": base[2:5]}, tmp_path / "v.pt")
    back = torch.load(tmp_path / "v.pt")
    back["base"].fill_(1)
    assert back["view"].cpu().tolist() == [1.0, 1.0, 1.0]  # the view still aliases


def test_safetensors_onto_neuron(tmp_path):
    tensors = {
        "w": torch.randn(3, 3),
        "b": torch.arange(3, dtype=torch.int64),
        "h": torch.randn(2, 2).to(torch.bfloat16),
    }
    safetensors.torch.save_file(tensors, tmp_path / "m.safetensors")
    # safetensors' parser knows only its own device names, so the device is
    # given by index: an int is the current accelerator's index, here neuron.
    loaded = safetensors.torch.load_file(tmp_path / "m.safetensors", device=1)
    for k, v in tensors.items():
        assert loaded[k].device == torch.device("neuron", 1) and loaded[k].dtype == v.dtype
        assert torch.equal(loaded[k].cpu(), v)
    with safetensors.safe_open(tmp_path / "m.safetensors", framework="pt") as f:  # Transformers' path
        w = f.get_tensor("w").to("neuron")
    assert torch.equal(w.cpu(), tensors["w"])
    on_dev = {k: v.to("neuron") for k, v in tensors.items()}
    safetensors.torch.save_file(on_dev, tmp_path / "dev.safetensors")
    assert torch.equal(safetensors.torch.load_file(tmp_path / "dev.safetensors")["w"], tensors["w"])

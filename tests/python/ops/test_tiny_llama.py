"""A tiny Llama-style model (from a config, random weights) on neuron against
the CPU: forward, backward and one AdamW step, bitwise equal in float32 (every
op runs the CPU's own kernel, scaled_dot_product_attention included: its
backend choice is forwarded to the CPU's, so both take the flash kernel), with
no copying fallback."""

import torch
from helpers.tiny_llama import cpu_and_neuron_pair

import torch_neuronx


def test_forward_backward_and_adamw_step_match_cpu():
    cpu, dev, ids = cpu_and_neuron_pair()
    assert all(p.device.type == "cpu" for p in cpu.parameters())
    assert all(p.device.type == "neuron" for p in dev.parameters())
    out_c = cpu(ids, labels=ids)
    out_d = dev(ids.to("neuron"), labels=ids.to("neuron"))
    assert out_d.logits.device.type == "neuron" and out_c.logits.device.type == "cpu"
    assert torch.equal(out_d.logits.cpu(), out_c.logits)
    out_c.loss.backward()
    out_d.loss.backward()
    for p, q in zip(cpu.parameters(), dev.parameters()):
        assert q.grad.device.type == "neuron"
        assert torch.equal(q.grad.cpu(), p.grad)
    torch.optim.AdamW(cpu.parameters(), lr=1e-3).step()
    torch.optim.AdamW(dev.parameters(), lr=1e-3).step()
    for p, q in zip(cpu.parameters(), dev.parameters()):
        assert torch.equal(q.detach().cpu(), p.detach())
    assert torch_neuronx.get_fallback_ops() == {}
    assert "aten::_scaled_dot_product_flash_attention_for_cpu" in torch_neuronx.get_executed_ops()

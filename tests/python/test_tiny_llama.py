"""A tiny Llama-style model (from a config, random weights) on neuron against
the CPU: forward, backward and one AdamW step, bitwise equal in float32 (every
op runs the CPU's own kernel, scaled_dot_product_attention included: its
backend choice is forwarded to the CPU's, so both take the flash kernel), with
no copying fallback."""

import torch
from transformers import LlamaConfig, LlamaForCausalLM

import torch_neuronx


def test_forward_backward_and_adamw_step_match_cpu():
    cfg = LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
    torch.manual_seed(0)
    cpu = LlamaForCausalLM(cfg)
    dev = LlamaForCausalLM(cfg)
    dev.load_state_dict(cpu.state_dict())
    dev.to("neuron")
    assert all(p.device.type == "cpu" for p in cpu.parameters())
    assert all(p.device.type == "neuron" for p in dev.parameters())
    ids = torch.randint(0, 256, (2, 16))
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

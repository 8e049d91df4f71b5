"""One forward, backward and AdamW step of a tiny Llama on neuron equals the
CPU's (test_host_access_off.py runs it on devices the host cannot address)."""

import torch
from transformers import LlamaConfig, LlamaForCausalLM

cfg = LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
torch.manual_seed(0)
cpu = LlamaForCausalLM(cfg)
dev = LlamaForCausalLM(cfg)
dev.load_state_dict(cpu.state_dict())
dev.to("neuron")
ids = torch.randint(0, 256, (2, 16))
out_c = cpu(ids, labels=ids)
out_d = dev(ids.to("neuron"), labels=ids.to("neuron"))
torch.testing.assert_close(out_d.logits.cpu(), out_c.logits, rtol=1e-5, atol=1e-5)
out_c.loss.backward()
out_d.loss.backward()
torch.optim.AdamW(cpu.parameters(), lr=1e-3).step()
torch.optim.AdamW(dev.parameters(), lr=1e-3).step()
for p, q in zip(cpu.parameters(), dev.parameters()):
    assert q.device.type == "neuron"
    torch.testing.assert_close(q.detach().cpu(), p.detach(), rtol=1e-5, atol=1e-6)
print("tiny llama step ok")

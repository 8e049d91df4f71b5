"""One forward, backward and AdamW step of a tiny Llama on neuron equals the
CPU's (test_host_access_off.py runs it on devices the host cannot address)."""

import torch
from helpers.tiny_llama import cpu_and_neuron_pair

cpu, dev, ids = cpu_and_neuron_pair()
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

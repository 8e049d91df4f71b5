"""An MLP compiled with the neuron backend, forward and backward, equals the
CPU's; prints the compile metrics (test_host_access_off.py)."""

import torch

import torch_neuronx

torch.manual_seed(0)
cpu = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4))
dev = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4))
dev.load_state_dict(cpu.state_dict())
dev.to("neuron")
x = torch.randn(8, 16)
ref = cpu(x)
ref.sum().backward()
out = torch.compile(dev, backend="neuron")(x.to("neuron"))
out.sum().backward()
torch.testing.assert_close(out.cpu(), ref, rtol=1e-5, atol=1e-5)
for p, q in zip(cpu.parameters(), dev.parameters()):
    torch.testing.assert_close(q.grad.cpu(), p.grad, rtol=1e-5, atol=1e-6)
m = torch_neuronx.get_dynamo_metrics()
print("compiled mlp ok", "graphs_compiled", m["graphs_compiled"], "host_staged_graphs", m["host_staged_graphs"])

"""A small training loop on neuron with nothing strict mode reports: float32,
no host reads inside the loop, the loss read once after the last step."""

import torch

import torch_neuronx  # noqa: F401

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)).neuron()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(8, 16).neuron()
target = torch.randn(8, 4).neuron()
for _step in range(3):
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    opt.step()
    opt.zero_grad()
print("clean script done, loss", loss.detach().cpu())

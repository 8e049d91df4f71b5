"""The modules the tensor-parallel workers shard: an MLP and an attention
block, `fresh(cls)` (seeded, on neuron) and `full(p)` (a DTensor's full tensor)."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.distributed.tensor import DTensor

DIM, HEADS = 16, 4


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.up, self.down = nn.Linear(DIM, 4 * DIM), nn.Linear(4 * DIM, DIM)

    def forward(self, x):
        return self.down(F.gelu(self.up(x)))


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.v, self.o = (nn.Linear(DIM, DIM) for _ in range(3))
        self.k = nn.Linear(DIM, DIM, bias=False)  # softmax ignores a key bias: its gradient is rounding noise

    def forward(self, x):
        b, s, _ = x.shape
        heads = lambda t: t.view(b, s, -1, DIM // HEADS).transpose(1, 2)  # noqa: E731  (-1: the heads on this rank)
        a = F.scaled_dot_product_attention(heads(self.q(x)), heads(self.k(x)), heads(self.v(x)), is_causal=True)
        return self.o(a.transpose(1, 2).reshape(b, s, -1))


def full(p):
    return p.full_tensor() if isinstance(p, DTensor) else p


def fresh(cls):
    torch.manual_seed(0)
    return cls().to("neuron")

"""FSDP2 training of a small transformer against one process, and a
torch.distributed.checkpoint saved mid-run that a freshly sharded model
resumes from exactly (test_distributed_fsdp2.py)."""

import os

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.nn.functional as F
from helpers.rank import RANK, WORLD, init
from torch import nn
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard

VOCAB, DIM, HEADS, SEQ, PER_RANK, STEPS, SAVE_AT = 64, 32, 4, 16, 2, 20, 10


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(DIM), nn.LayerNorm(DIM)
        self.qkv, self.proj = nn.Linear(DIM, 3 * DIM), nn.Linear(DIM, DIM)
        self.up, self.down = nn.Linear(DIM, 4 * DIM), nn.Linear(4 * DIM, DIM)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, s, 3, HEADS, DIM // HEADS).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, s, DIM)
        x = x + self.proj(a)
        return x + self.down(F.gelu(self.up(self.norm2(x))))


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.blocks = nn.ModuleList([Block(), Block()])
        self.norm, self.head = nn.LayerNorm(DIM), nn.Linear(DIM, VOCAB)

    def forward(self, ids):
        x = self.embed(ids)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x))


def batch(step):  # the global batch of a step (every rank computes the same): count up from a random start
    g = torch.Generator().manual_seed(100 + step)
    start = torch.randint(0, VOCAB, (PER_RANK * WORLD, 1), generator=g)
    return (start + torch.arange(SEQ + 1)) % VOCAB


def loss_of(model, ids):
    ids = ids.to("neuron")
    logits = model(ids[:, :-1])
    return F.cross_entropy(logits.reshape(-1, VOCAB), ids[:, 1:].reshape(-1))


def build():
    torch.manual_seed(0)
    return Tiny().to("neuron")


def sharded(mesh):
    model = build()
    for blk in model.blocks:
        fully_shard(blk, mesh=mesh)
    fully_shard(model, mesh=mesh)
    return model, torch.optim.AdamW(model.parameters(), lr=3e-3)


def train(model, opt, steps, save_dir=None, mine=slice(None)):
    losses = []
    for step in steps:
        loss = loss_of(model, batch(step)[mine])
        loss.backward()
        opt.step()
        opt.zero_grad()
        if isinstance(mine, slice) and mine != slice(None):
            loss = loss.detach().clone()
            dist.all_reduce(loss, op=dist.ReduceOp.AVG)
        losses.append(loss.item())
        if save_dir and step == SAVE_AT - 1:
            msd, osd = get_state_dict(model, opt)
            dcp.save({"model": msd, "optim": osd}, checkpoint_id=save_dir)
    return losses


init(timeout_s=120)
# The reference: the same model and global batches in this one process.
ref_model = build()
reference = train(ref_model, torch.optim.AdamW(ref_model.parameters(), lr=3e-3), range(STEPS))

mesh = init_device_mesh("neuron", (WORLD,))
mine = slice(RANK * PER_RANK, (RANK + 1) * PER_RANK)
model, opt = sharded(mesh)
assert model.embed.weight.to_local().device.type == "neuron"
ckpt = os.path.join(os.path.dirname(os.environ["NEURON_TEST_STORE"]), "ckpt")
losses = train(model, opt, range(STEPS), save_dir=ckpt, mine=mine)
worst = max(abs(a - b) / abs(b) for a, b in zip(losses, reference))
assert worst <= 1e-5, (worst, losses, reference)
assert losses[-1] < losses[0] * 0.9, losses  # it learns

resumed, ropt = sharded(mesh)
msd, osd = get_state_dict(resumed, ropt)
state = {"model": msd, "optim": osd}
dcp.load(state, checkpoint_id=ckpt)
set_state_dict(resumed, ropt, model_state_dict=state["model"], optim_state_dict=state["optim"])
again = train(resumed, ropt, range(SAVE_AT, STEPS), mine=mine)
assert again == losses[SAVE_AT:], (again, losses[SAVE_AT:])
print("worst relative difference", worst)
dist.destroy_process_group()

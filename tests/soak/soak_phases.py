"""The soak's phases (`make soak`, run_soak.py runs each in a process of its
own): `train` (a tiny Llama, AdamW, bf16 autocast, compiled by the neuron
backend), `generate` (greedy generate calls of the same model, Transformers'
defaults) and `fsdp` (one rank of a 2-rank FSDP2 training loop). argv: phase
and steps. Prints the soak_probe verdict; exits 1 if it failed."""

import sys

import torch
from soak_probe import Sampler
from transformers import LlamaConfig, LlamaForCausalLM

import torch_neuronx  # noqa: F401

EVERY = 50  # steps between samples


def tiny_llama() -> LlamaForCausalLM:
    cfg = LlamaConfig(
        vocab_size=256,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
    )
    torch.manual_seed(0)
    return LlamaForCausalLM(cfg).to("neuron")


def batch(step: int, rows: int = 4, seq: int = 32) -> torch.Tensor:
    g = torch.Generator().manual_seed(step)
    start = torch.randint(0, 256, (rows, 1), generator=g)
    return ((start + torch.arange(seq)) % 256).to("neuron")


def training(sampler: Sampler, forward, params, steps: int, batch_of) -> list[float]:
    """steps AdamW steps of forward(ids) -> loss on batch_of(step); samples
    every EVERY steps once the step's tensors are gone; returns the sampled losses."""
    opt, losses = torch.optim.AdamW(params, lr=1e-3), []
    for step in range(steps):
        ids = batch_of(step)
        loss = forward(ids)
        loss.backward()
        opt.step()
        opt.zero_grad()
        if step % EVERY == 0 or step == steps - 1:
            losses.append(round(loss.item(), 4))
            del ids, loss
            sampler.sample(step)
    return losses


def train(steps: int) -> bool:
    model = tiny_llama()
    step_fn = torch.compile(model, backend="neuron")

    def forward(ids):
        with torch.autocast("neuron", dtype=torch.bfloat16):
            return step_fn(ids, labels=ids).loss

    sampler = Sampler("train", steps, warmup=max(EVERY, steps // 10))
    losses = training(sampler, forward, model.parameters(), steps, batch)
    learned = losses[-1] < losses[0] * 0.5
    return sampler.report(first_loss=losses[0], last_loss=losses[-1], learned=learned) and learned


def generate(calls: int) -> bool:
    model = tiny_llama().eval()
    sampler = Sampler("generate", calls, warmup=max(EVERY, calls // 10))
    tokens = 0
    for call in range(calls):
        out = model.generate(batch(call, rows=1, seq=8), max_new_tokens=8, do_sample=False, pad_token_id=0)
        tokens += out.shape[1] - 8
        if call % EVERY == 0 or call == calls - 1:
            del out
            sampler.sample(call)
    return sampler.report(new_tokens=tokens)


def fsdp(steps: int) -> bool:
    import torch.distributed as dist
    from helpers.rank import RANK, WORLD, init
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    init(timeout_s=120)
    model = tiny_llama()
    mesh = init_device_mesh("neuron", (WORLD,))
    for layer in model.model.layers:
        fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    sampler = Sampler(f"fsdp rank {RANK}", steps, warmup=max(EVERY, steps // 10))
    losses = training(
        sampler,
        lambda ids: model(ids, labels=ids).loss,
        model.parameters(),
        steps,
        lambda step: batch(step * WORLD + RANK, rows=2),
    )
    ok = sampler.report(first_loss=losses[0], last_loss=losses[-1])
    dist.destroy_process_group()
    return ok


if __name__ == "__main__":
    phase, steps = sys.argv[1], int(sys.argv[2])
    sys.exit(0 if {"train": train, "generate": generate, "fsdp": fsdp}[phase](steps) else 1)

"""The tiny Llama the eager tests train: one config, random weights (seed 0),
a CPU model and a neuron model with the same weights, and a batch of ids."""

import torch
from transformers import LlamaConfig, LlamaForCausalLM


def cpu_and_neuron_pair():
    """(cpu model, neuron model with the same weights, ids of shape (2, 16) on the CPU)."""
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
    cpu = LlamaForCausalLM(cfg)
    dev = LlamaForCausalLM(cfg)
    dev.load_state_dict(cpu.state_dict())
    dev.to("neuron")
    return cpu, dev, torch.randint(0, 256, (2, 16))

"""Tiny random-weight causal LMs built from Transformers configs, for tests,
benchmarks and examples (no model hub is reachable here). Importing this
module does not import Transformers; building a model does."""

TINY_ARCHITECTURES = ("llama", "qwen3", "mistral", "gpt2")


def tiny_causal_lm_config(
    arch: str,
    *,
    vocab_size: int = 128,
    hidden_size: int = 32,
    layers: int = 2,
    initializer_range: float = 0.2,
    **overrides,
):
    """A small config of one of TINY_ARCHITECTURES. A large initializer range
    keeps the top-1 margin of random logits clear, so greedy tokens do not
    flip on harmless rounding."""
    import transformers

    if arch == "gpt2":
        kwargs = dict(
            vocab_size=vocab_size,
            n_embd=hidden_size,
            n_layer=layers,
            n_head=4,
            n_positions=128,
            bos_token_id=0,
            eos_token_id=None,
            pad_token_id=0,
        )
        return transformers.GPT2Config(initializer_range=initializer_range, **{**kwargs, **overrides})
    classes = {
        "llama": transformers.LlamaConfig,
        "qwen3": transformers.Qwen3Config,
        "mistral": transformers.MistralConfig,
    }
    if arch not in classes:
        raise ValueError(f"unknown tiny architecture {arch!r}; choose one of {TINY_ARCHITECTURES}")
    kwargs = dict(
        vocab_size=vocab_size,
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=hidden_size // 4,
        max_position_embeddings=128,
        bos_token_id=0,
        eos_token_id=None,
        pad_token_id=0,
    )
    return classes[arch](initializer_range=initializer_range, **{**kwargs, **overrides})


def tiny_causal_lm(arch: str, device="neuron", dtype=None, seed: int = 0, **config_overrides):
    """An eval-mode tiny causal LM of `arch` with seeded random weights on `device`."""
    import torch
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(
        tiny_causal_lm_config(arch, **config_overrides), attn_implementation="sdpa"
    )
    if getattr(model, "loss_type", None) is None:
        # Transformers infers the loss from the class name, which GPT2LMHeadModel's
        # does not give; it then logs a warning inside forward, a graph break.
        model.loss_type = "ForCausalLM"
    return model.to(device=device, dtype=dtype).eval()

"""Tiny random-weight configs for the architecture sweep (architecture_sweep.py).

tiny_config(model_type) is Transformers' default config of model_type with
every size in SMALL that it has made small, kept valid by the model's own
rules: first generic ones (_shrink: per-layer patterns, multi-head latent
attention, per-layer overrides, special token ids), then the per-architecture
OVERRIDES (config kwargs) and FIXES (edits of the built config). MODEL_SETUP
holds steps on the built CPU model; CANNOT_RUN names the architectures that
cannot generate on the CPU at tiny size, with what in Transformers stops them.
"""

import dataclasses

SMALL = dict(
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=16,
    vocab_size=256,
    max_position_embeddings=256,
    n_embd=64,
    n_layer=2,
    n_head=4,
    n_inner=128,
    n_positions=256,
    d_model=64,
    ffn_dim=128,
    decoder_layers=2,
    encoder_layers=2,
    decoder_attention_heads=4,
    encoder_attention_heads=4,
    decoder_ffn_dim=128,
    encoder_ffn_dim=128,
    num_layers=2,
    num_heads=4,
    d_ff=128,
    moe_intermediate_size=64,
    shared_expert_intermediate_size=64,
    num_experts=4,
    num_local_experts=4,
    n_routed_experts=4,
    num_experts_per_tok=2,
    first_k_dense_replace=1,
    kv_lora_rank=16,
    q_lora_rank=16,
    qk_rope_head_dim=8,
    qk_nope_head_dim=8,
    v_head_dim=16,
    linear_num_key_heads=2,
    linear_num_value_heads=4,
    linear_key_head_dim=16,
    linear_value_head_dim=16,
    sliding_window=64,
    initializer_range=0.5,
    max_length=64,
    n_group=2,
    topk_group=1,  # expert groups: n_group divides the experts, >= 2 experts per group
    rotary_dim=8,  # codegen, gptj: the rotated part of a head (<= head_dim)
    index_head_dim=16,
    index_n_heads=2,  # DSA indexers (>= qk_rope_head_dim)
    vocab_size_per_layer_input=256,
    hidden_size_per_layer_input=16,
)  # gemma 3n / 4 per-layer inputs
MAX_LAYERS = 4  # a per-layer pattern may grow the layers up to this to keep every kind of layer
SUB_CONFIGS = ("text_config", "decoder", "language_config")  # shrunk like the top level for every model
SPECIAL_IDS = dict(pad_token_id=0, bos_token_id=1, eos_token_id=2)  # for ids past the vocab: strict configs want ints

# Per-architecture config kwargs, applied last. "<arch>.<sub>" applies to the sub-config <sub> of a
# composite config; naming a tower (vision_config, ...) there also shrinks it.
OVERRIDES: dict[str, dict] = {
    "bamba": dict(attn_layer_indices=[1]),  # layer 1 attends (attn_layer_indices), layer 0 is mamba
    "cohere_compass_text": dict(
        rope_parameters={  # rope_parameters per layer type (the default {} has none);
            "full_attention": {"rope_type": "default", "rope_theta": 1e4, "mrope_section": [4, 2, 2]}
        }
    ),  # sum hd/2
    "cpmant": dict(dim_ff=128, dim_head=16),  # dim_head * num_attention_heads == hidden_size
    "ctrl": dict(dff=128),  # its feed-forward width
    "dbrx": dict(
        n_heads=4,
        n_layers=2,
        max_seq_len=256,  # DbrxAttention reads attn_config.rope_theta (no such
        attn_config={"kv_n_heads": 2, "rope_theta": 1e4, "clip_qkv": 8.0},  # field) and clamps by
        ffn_config={"ffn_hidden_size": 128, "moe_num_experts": 4, "moe_top_k": 2},
    ),  # clip_qkv
    "dots1": dict(n_shared_experts=1),  # the shared expert is moe_intermediate_size * n_shared_experts wide
    "dots3_note_text": dict(head_dim=16),  # inherited by the sliding layers: their qk_nope + qk_rope head dims
    "gemma3n_text": dict(  # the last num_kv_shared_layers reuse the cache of an earlier layer of their type
        num_hidden_layers=4,
        layer_types=["sliding_attention", "full_attention"] * 2,
        num_kv_shared_layers=2,
        activation_sparsity_pattern=[0.95, 0.0, 0.0, 0.0],
    ),  # one sparsity per layer
    "gpt_neo": dict(attention_types=[[["global", "local"], 1]]),  # expands to one entry per layer
    "granitemoehybrid": dict(layer_types=["linear_attention", "full_attention"]),  # default: all mamba
    "jamba": dict(attn_layer_period=2, attn_layer_offset=1),  # layer i attends if i % period == offset
    "lfm2_moe": dict(layer_types=["conv", "full_attention"], num_dense_layers=1),  # no default layer_types
    "longcat_flash": dict(moe_topk=2, zero_expert_num=2, expert_ffn_hidden_size=64),  # top-k <= experts
    "mamba2": dict(num_heads=8, n_groups=2),  # hidden_size * expand == num_heads * head_dim; n_groups | heads
    "qwen4_exp_text": dict(
        indexer_n_heads=2,
        indexer_kv_heads=1,
        indexer_head_dim=16,  # its indexed layers
        indexer_budget=8,
        indexer_compress_ratio=4,
    ),  # need the QSA fields (default None)
    "recurrent_gemma": dict(num_hidden_layers=3),  # block_types (recurrent, recurrent, attention) repeat
    "reformer": dict(
        is_decoder=True,
        attn_layers=["local", "lsh"],
        num_hidden_layers=2,  # one entry a layer;
        axial_pos_shape=[16, 16],
        axial_pos_embds_dim=[32, 32],
    ),  # product: positions; sum: hidden
    "roc_bert": dict(
        pronunciation_vocab_size=64, pronunciation_embed_dim=32, shape_vocab_size=64, shape_embed_dim=32
    ),  # its glyph and pinyin embeddings (24858 x 512 by default)
    "xlstm": dict(hidden_size=128, embedding_dim=128, num_blocks=2),  # hidden * qk_dim_factor: a multiple of
    # 64, as the cache rounds qk_dim up to 64 and the layers do not
    "xmod": dict(default_language="en_XX"),  # what set_default_language sets: the adapter for unmarked input
    "zamba": dict(num_hidden_layers=4, layers_block_type=["linear_attention", "hybrid"] * 2),  # the hybrid
    # layers share one transformer block, tied by a regex that must match a second hybrid layer
    "zaya": dict(num_experts_per_tok=1),  # ZAYA supports top-1 routing only
    "blt": dict(encoder_hash_byte_group_vocab=512),  # the n-gram hash embeddings' rows (500002)
    "blt.encoder_config": dict(hidden_size_global=64),  # == global_config.hidden_size
    "blt.decoder_config": dict(hidden_size_global=64),
    "blt.patcher_config": {},
    "blt.global_config": {},  # the entropy patcher and global transformer: small too
    "dots3_note.vision_config": dict(adapter_in_dim=64, adapter_out_dim=64),  # adapters map the towers'
    "dots3_note.audio_config": dict(adapter_input_size=64, adapter_out_dim=64),  # output to the text width
    "phi4_multimodal.audio_config": dict(
        num_blocks=2, ext_pw_out_channel=64, nemo_conv_channels=64, depthwise_separable_out_channel=64
    ),  # its conformer's widths
    # generate reshapes input_ids to (batch, num_codebooks, length): the sweep's one row is one codebook;
    # the pad / start token is one past the codebook (the embeddings have vocab_size + 1 rows)
    "musicgen.decoder": dict(num_codebooks=1, pad_token_id=256, bos_token_id=256),
}
for _arch in ("qwen4_exp", "gemma3n", "dots3_note"):  # composites: their text model's rules
    OVERRIDES[f"{_arch}.text_config"] = OVERRIDES[f"{_arch}_text"]
OVERRIDES["musicgen_melody.decoder"] = OVERRIDES["musicgen.decoder"]
for _tower in (
    "gemma3.vision_config",
    "got_ocr2.vision_config",
    "git.vision_config",
    "phi4_multimodal.vision_config",
    "moss_transcribe_diarize.audio_config",
):
    OVERRIDES[_tower] = {}  # unused by text generation but built: small like the decoder


def _decoder_attributes(config):
    """AutoModelForCausalLM builds MusicgenForCausalLM, a decoder-only model, from the composite config: it
    reads the decoder's attributes (dropout, num_codebooks, is_encoder_decoder False, ...) from it."""
    for key, value in config.decoder.to_dict().items():
        if key != "model_type":
            setattr(config, key, value)


def _blt_sizes(config):
    """BltConfig has no num_hidden_layers, which DynamicCache(config) reads; Transformers' BLT tests set the
    top-level sizes from the sub-configs the same way."""
    config.num_hidden_layers = config.encoder_config.num_hidden_layers
    config.num_attention_heads = config.decoder_config.num_attention_heads
    config.hidden_size = config.decoder_config.hidden_size


# Per-architecture edits of the built config, for rules kwargs cannot express.
FIXES: dict = {"musicgen": _decoder_attributes, "musicgen_melody": _decoder_attributes, "blt": _blt_sizes}


def _musicgen_generation_config(model):
    """What a MusicGen checkpoint's generation_config.json holds: decoder_start_token_id, the pad token (a
    decoder-only config gets none from bos). MusicgenForCausalLM.generate also reads generation_config without
    the global defaults (unlike GenerationMixin.generate): num_return_sequences None fails repeat_interleave."""
    model.generation_config.decoder_start_token_id = model.config.pad_token_id
    model.generation_config.update(**model.generation_config._get_default_generation_params(), defaults_only=True)


# Per-architecture steps on the built CPU model, before the neuron copy is made.
MODEL_SETUP: dict = {"musicgen": _musicgen_generation_config, "musicgen_melody": _musicgen_generation_config}

_ASSISTANT = (
    "a drafter for a Gemma 4 target: its config requires num_kv_shared_layers == num_hidden_layers "
    "(all its KV comes from the target), and building its layers then raises in kv_sharing_modes "
    "('The set of layer types producing a cache is different than the set of layer types using them'); "
    "its forward also requires the target's inputs_embeds and shared_kv_states"
)
# Architectures that cannot build or generate on the CPU at tiny size: what stops them.
CANNOT_RUN: dict[str, str] = {
    "gemma3n": "Gemma3nForConditionalGeneration builds its vision tower with TimmWrapperModel, which needs the "
    "timm library (not installed); gemma3n_text covers its decoder",
    "gemma4_assistant": _ASSISTANT + " (its default config also fails its own validation: "
    "hidden_size_per_layer_input must be 0, got 256)",
    "gemma4_unified_assistant": _ASSISTANT,
}


def small_layer_types(full: list, n: int, max_n: int = MAX_LAYERS) -> list:
    """The first n entries of a per-layer pattern, grown up to max_n layers if that brings in every kind of
    layer the model has (e.g. a hybrid's full-attention layers); else the first entries with the last
    duplicates turned into the missing kinds."""
    kinds = list(dict.fromkeys(full))
    for m in range(n, max_n + 1):
        if set(full[:m]) == set(kinds):
            return list(full[:m])
    types = list(full[: max(n, len(kinds))])
    for kind in (k for k in kinds if k not in types):
        types[max(j for j, t in enumerate(types) if types.count(t) > 1)] = kind
    return types


def _small_per_layer(d: dict, kwargs: dict, per_layer: dict, full: list, tiny: list) -> dict:
    """per_layer_config (attribute overrides keyed by layer index) for the tiny layers: each takes those of
    the model's first layer of its kind, sizes made small as the config's own are (a 512 where the config
    has 256 becomes twice the tiny size)."""

    def small(key, value):
        default = d.get(key)
        if key not in kwargs or not isinstance(value, int) or isinstance(value, bool):
            return value
        if isinstance(default, int) and default > 0 and value % default == 0:
            return kwargs[key] * (value // default)
        return kwargs[key]

    by_index = {int(i): values for i, values in per_layer.items()}
    out = {}
    for i, kind in enumerate(tiny):
        source = next((j for j, t in enumerate(full) if t == kind and j in by_index), None)
        if source is not None:
            out[i] = {k: small(k, v) for k, v in by_index[source].items()}
    return out


def _shrink(cfg, override: dict) -> dict:
    """Config kwargs that make cfg, a default config, tiny."""
    d = cfg.to_dict()  # not getattr: per-layer attributes (per_layer_config) refuse a global read
    keys = set(d)
    kwargs = {k: v for k, v in SMALL.items() if k in keys}
    aliases = getattr(cfg, "attribute_map", {})
    for alias, value in SMALL.items():  # the config's own names, e.g. num_experts_per_token, n_heads
        if aliases.get(alias) in keys and aliases[alias] not in kwargs:
            kwargs[aliases[alias]] = value
    if "qk_rope_head_dim" in keys:  # multi-head latent attention
        if "head_dim" in keys:  # keep head_dim's relation to the rope slice (the slice, or nope + rope)
            rope = kwargs["qk_rope_head_dim"]
            nope_rope = d.get("qk_nope_head_dim", 0) + d["qk_rope_head_dim"]
            kwargs["head_dim"] = rope + kwargs["qk_nope_head_dim"] if d["head_dim"] == nope_rope else rope
        if d.get("num_key_value_heads") in (None, d.get("num_attention_heads")) and "num_attention_heads" in kwargs:
            kwargs["num_key_value_heads"] = kwargs["num_attention_heads"]  # one k/v per head (static caches)
    # per-layer patterns: shorten to the tiny depth, keeping every kind of layer
    n = override.get("num_hidden_layers", kwargs.get("num_hidden_layers"))
    fields = {f.name for f in dataclasses.fields(cfg)} if dataclasses.is_dataclass(cfg) else set()
    name = "layer_types" if "layer_types" in fields else aliases.get("layer_types")  # zamba: layers_block_type
    full = d.get(name)
    if n and name in fields and isinstance(full, (list, tuple)) and name not in override:
        kwargs[name] = small_layer_types(list(full), n)
        n = kwargs["num_hidden_layers"] = len(kwargs[name])
    mlp = d.get("mlp_layer_types")
    if n and "mlp_layer_types" in fields and isinstance(mlp, (list, tuple)) and "mlp_layer_types" not in override:
        kwargs["mlp_layer_types"] = small_layer_types(list(mlp), n, n)
    per_layer = d.get("per_layer_config")
    kinds = (name, full) if isinstance(full, (list, tuple)) else ("mlp_layer_types", mlp)
    if isinstance(per_layer, dict) and kinds[0] in kwargs and "per_layer_config" not in override:
        kwargs["per_layer_config"] = _small_per_layer(d, kwargs, per_layer, list(kinds[1]), kwargs[kinds[0]])
    vocab = override.get("vocab_size", kwargs.get("vocab_size", d.get("vocab_size")))
    for token, small_id in SPECIAL_IDS.items():
        if isinstance(vocab, int) and isinstance(d.get(token), int) and d[token] >= vocab:
            kwargs[token] = small_id
    kwargs.update(override)
    return kwargs


def tiny_config(model_type: str):
    """The default config of model_type with every size it has made small, valid by the model's rules."""
    from transformers import AutoConfig

    default = AutoConfig.for_model(model_type)
    kwargs = _shrink(default, OVERRIDES.get(model_type, {}))
    towers = [key.split(".", 1)[1] for key in OVERRIDES if key.startswith(model_type + ".")]
    for sub in dict.fromkeys([*SUB_CONFIGS, *towers]):
        sub_cfg = getattr(default, sub, None)
        if sub_cfg is not None and hasattr(sub_cfg, "to_dict"):
            kwargs[sub] = {**sub_cfg.to_dict(), **_shrink(sub_cfg, OVERRIDES.get(f"{model_type}.{sub}", {}))}
    config = AutoConfig.for_model(model_type, **kwargs)
    if model_type in FIXES:
        FIXES[model_type](config)
    if getattr(config, "eos_token_id", None) is not None:
        config.eos_token_id = None  # always generate NEW_TOKENS tokens
    return config

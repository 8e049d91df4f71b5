"""Builds a tiny random-weight FLUX.1 (schnell-like) text-to-image pipeline, saved as an ordinary
diffusers directory (`FluxPipeline.from_pretrained(path)` loads it): a CLIP text model and a T5 encoder
with tokenizers made here (no sentencepiece, no hub), a `FluxTransformer2DModel` (whose `_tp_plan`
diffusers' tensor parallelism uses), FLUX's 16-channel AutoencoderKL and a flow-matching scheduler.
Called by examples/build_artifacts.py.

Sizes keep a 2-core CPU fast: 2 double- and 2 single-stream blocks of 4 heads x 16 (TP=2 or 4 splits the
heads), text widths 32, VAE widths 8-16 over 4 levels (FLUX's 8x scale, so sizes are multiples of 16).
"""

from pathlib import Path

CLIP_HIDDEN = 32  # CLIPTextModel.pooler_output width -> transformer pooled_projection_dim
T5_HIDDEN = 32  # T5 d_model -> transformer joint_attention_dim
CLIP_MAX_LENGTH = 77  # tokenizer.model_max_length -> pipe.tokenizer_max_length (CLIP pads to it)
LATENT_CHANNELS = 16  # FLUX VAE; the transformer sees 2x2-packed latents: 4 * 16 = 64 channels


def build_clip_tokenizer():
    from tokenizers import pre_tokenizers
    from transformers import CLIPTokenizer

    # Byte-level characters, alone and word-final ("</w>"), as CLIP's first 512 ids; no merges, so every
    # word tokenizes character by character and nothing is unknown.
    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {ch: i for i, ch in enumerate(alphabet)}
    vocab.update({ch + "</w>": len(alphabet) + i for i, ch in enumerate(alphabet)})
    vocab["<|startoftext|>"] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    return CLIPTokenizer(vocab=vocab, merges=[], model_max_length=CLIP_MAX_LENGTH)


def build_t5_tokenizer():
    import string

    from transformers import T5TokenizerFast  # transformers 5: the same class as T5Tokenizer (Unigram)

    # Unigram pieces: T5's fixed specials (<unk> must be id 2), the word-start marker and single characters.
    pieces = [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), ("\u2581", -2.0)]
    pieces += [(ch, -3.0) for ch in string.ascii_letters + string.digits + string.punctuation]
    return T5TokenizerFast(vocab=pieces, extra_ids=0, model_max_length=512)


def build_clip_text_encoder(tokenizer):
    from transformers import CLIPTextConfig, CLIPTextModel

    # FluxPipeline takes CLIPTextModel (not ...WithProjection) and uses its pooler_output: the hidden state
    # at the first eos, so eos_token_id must be the tokenizer's (and not 2, CLIP's legacy argmax path).
    config = CLIPTextConfig(
        vocab_size=len(tokenizer),
        hidden_size=CLIP_HIDDEN,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        max_position_embeddings=CLIP_MAX_LENGTH,
        projection_dim=CLIP_HIDDEN,
        hidden_act="quick_gelu",
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return CLIPTextModel(config).eval()


def build_t5_text_encoder(tokenizer):
    from transformers import T5Config, T5EncoderModel

    config = T5Config(
        vocab_size=len(tokenizer),
        d_model=T5_HIDDEN,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_heads=4,
        relative_attention_num_buckets=8,
        relative_attention_max_distance=32,
        dropout_rate=0.0,
        feed_forward_proj="gated-gelu",
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    return T5EncoderModel(config).eval()


def build_flux_transformer():
    from diffusers import FluxTransformer2DModel

    # patch_size 1: the pipeline packs 2x2 latent patches itself. RoPE axes sum to the head dim.
    return FluxTransformer2DModel(
        patch_size=1,
        in_channels=4 * LATENT_CHANNELS,
        num_layers=2,
        num_single_layers=2,
        attention_head_dim=16,
        num_attention_heads=4,
        joint_attention_dim=T5_HIDDEN,
        pooled_projection_dim=CLIP_HIDDEN,
        guidance_embeds=False,
        axes_dims_rope=(4, 6, 6),
    )


def build_flux_vae():
    from diffusers import AutoencoderKL

    # FLUX's VAE (SD3's layout with FLUX's scaling/shift), narrow: 4 levels keep the 8x scale.
    return AutoencoderKL(
        in_channels=3,
        out_channels=3,
        down_block_types=("DownEncoderBlock2D",) * 4,
        up_block_types=("UpDecoderBlock2D",) * 4,
        block_out_channels=(8, 16, 16, 16),
        layers_per_block=1,
        act_fn="silu",
        latent_channels=LATENT_CHANNELS,
        norm_num_groups=8,
        sample_size=64,
        scaling_factor=0.3611,
        shift_factor=0.1159,
        use_quant_conv=False,
        use_post_quant_conv=False,
        mid_block_add_attention=True,
    )


def build_flux_scheduler():
    from diffusers import FlowMatchEulerDiscreteScheduler

    # FLUX.1-schnell-like: no resolution-dependent shift.
    return FlowMatchEulerDiscreteScheduler(
        num_train_timesteps=1000,
        shift=1.0,
        use_dynamic_shifting=False,
        base_shift=0.5,
        max_shift=1.15,
        base_image_seq_len=256,
        max_image_seq_len=4096,
    )


def build_flux_pipeline(out: Path) -> None:
    """Saves the tiny FLUX.1 pipeline (float32 safetensors weights, fixed seed) to `out`."""
    import torch
    from diffusers import FluxPipeline

    torch.manual_seed(0)
    tokenizer, tokenizer_2 = build_clip_tokenizer(), build_t5_tokenizer()
    pipe = FluxPipeline(
        scheduler=build_flux_scheduler(),
        vae=build_flux_vae(),
        text_encoder=build_clip_text_encoder(tokenizer),
        tokenizer=tokenizer,
        text_encoder_2=build_t5_text_encoder(tokenizer_2),
        tokenizer_2=tokenizer_2,
        transformer=build_flux_transformer(),
    )
    pipe.save_pretrained(out)

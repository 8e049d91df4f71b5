"""Builds a tiny random-weight Qwen-Image 2.1 text-to-image pipeline, saved as an
ordinary diffusers directory (`QwenImage21Pipeline.from_pretrained(path)` loads
it): the pipeline the announcement's Diffusers script runs, whose `encode_prompt`
returns (embeds, mask, image-pad mask).

Components: a Qwen3-VL text encoder; a `Qwen3VLProcessor` (the project's local
tokenizer plus Qwen's vision tokens, appended so no existing id moves; an
image and a video processor, which need torchvision); a
`QwenImage21Transformer2DModel`, whose `_tp_plan` diffusers' tensor parallelism
uses; the Qwen-Image 2.1 VAE; a flow-matching scheduler.

Sizes keep a 2-core CPU fast and satisfy the pipeline's fixed geometry: 2
transformer blocks of 4 heads x 16 (TP=2 or 4 splits the heads), unpatched
latents of 16 channels (transformer in/out = VAE z_dim), a VAE of five stages
(the 16x downsampling the pipeline hard-codes), base width 8.
Called by examples/build_artifacts.py.
"""

from pathlib import Path

TEXT_HIDDEN = 64
LATENT_CHANNELS = 16
VISION_TOKENS = ["<|vision_start|>", "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>"]
# Qwen3-VL's template, reduced to what a pipeline renders: string content or a list of
# text/image/video items, no default system prompt. QwenImage21Pipeline counts the system
# turn to drop by rendering one with this template, so it must give exactly
# "<|im_start|>system\n{text}<|im_end|>\n", as the pipeline's own prompt template does.
QWEN3_VL_CHAT_TEMPLATE = (
    "{%- for message in messages -%}"
    "{{- '<|im_start|>' + message['role'] + '\n' -}}"
    "{%- if message['content'] is string -%}{{- message['content'] -}}"
    "{%- else -%}{%- for item in message['content'] -%}"
    "{%- if item['type'] == 'image' -%}{{- '<|vision_start|><|image_pad|><|vision_end|>' -}}"
    "{%- elif item['type'] == 'video' -%}{{- '<|vision_start|><|video_pad|><|vision_end|>' -}}"
    "{%- elif 'text' in item -%}{{- item['text'] -}}{%- endif -%}"
    "{%- endfor -%}{%- endif -%}"
    "{{- '<|im_end|>\n' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\n' -}}{%- endif -%}"
)


def build_processor(tokenizer_dir: Path):
    from transformers import AutoTokenizer, Qwen2VLImageProcessor, Qwen3VLProcessor, Qwen3VLVideoProcessor

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    tokenizer.add_tokens(VISION_TOKENS, special_tokens=True)
    # One merged vision token covers 16 x 2 = 32 pixels: one 2x2 group of the VAE's 16x latents.
    image_processor = Qwen2VLImageProcessor(
        patch_size=16,
        temporal_patch_size=2,
        merge_size=2,
        image_mean=[0.5] * 3,
        image_std=[0.5] * 3,
        min_pixels=32 * 32,
        max_pixels=2048 * 2048,
    )
    video_processor = Qwen3VLVideoProcessor(patch_size=16, temporal_patch_size=2, merge_size=2)
    return Qwen3VLProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        video_processor=video_processor,
        chat_template=QWEN3_VL_CHAT_TEMPLATE,
    )


def build_text_encoder(tokenizer):
    from transformers import Qwen3VLConfig, Qwen3VLForConditionalGeneration

    ids = {
        name: tokenizer.convert_tokens_to_ids(token)
        for name, token in (
            ("image_token_id", "<|image_pad|>"),
            ("video_token_id", "<|video_pad|>"),
            ("vision_start_token_id", "<|vision_start|>"),
            ("vision_end_token_id", "<|vision_end|>"),
        )
    }
    # mrope_section sums to head_dim / 2, laid out like Qwen3-VL's [24, 20, 20].
    text = dict(
        vocab_size=len(tokenizer),
        hidden_size=TEXT_HIDDEN,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        max_position_embeddings=2048,
        rope_parameters={
            "rope_type": "default",
            "rope_theta": 5000000.0,
            "mrope_section": [4, 2, 2],
            "mrope_interleaved": True,
        },
        pad_token_id=tokenizer.pad_token_id,
    )
    # patch, temporal patch and merge sizes match the image processor's.
    vision = dict(
        depth=1,
        hidden_size=32,
        intermediate_size=64,
        num_heads=2,
        out_hidden_size=TEXT_HIDDEN,
        patch_size=16,
        temporal_patch_size=2,
        spatial_merge_size=2,
        num_position_embeddings=64,
        deepstack_visual_indexes=[0],
    )
    config = Qwen3VLConfig(text_config=text, vision_config=vision, tie_word_embeddings=False, **ids)
    return Qwen3VLForConditionalGeneration(config).eval()


def build_transformer():
    from diffusers import QwenImage21Transformer2DModel

    return QwenImage21Transformer2DModel(
        patch_size=1,
        in_channels=LATENT_CHANNELS,
        out_channels=LATENT_CHANNELS,
        num_layers=2,
        attention_head_dim=16,
        num_attention_heads=4,
        context_in_dim=TEXT_HIDDEN,
        mlp_ratio=3,
        axes_dims_rope=(4, 6, 6),
    )


def build_vae():
    from diffusers import AutoencoderKLQwenImage21

    # Equal widths satisfy the residual down/up-sampling's divisibility; RGBA in and out (the defaults).
    return AutoencoderKLQwenImage21(
        base_dim=8,
        decoder_base_dim=8,
        z_dim=LATENT_CHANNELS,
        dim_mult=[1, 1, 1, 1, 1],
        num_res_blocks=1,
        attn_scales=[],
        temperal_downsample=[False, True, True, True],
        latents_mean=[0.0] * LATENT_CHANNELS,
        latents_std=[1.0] * LATENT_CHANNELS,
    )


def build_scheduler():
    from diffusers import FlowMatchEulerDiscreteScheduler

    # Qwen-Image's scheduler settings (a resolution-dependent shift: the pipeline passes `mu`).
    return FlowMatchEulerDiscreteScheduler(
        num_train_timesteps=1000,
        shift=1.0,
        use_dynamic_shifting=True,
        base_shift=0.5,
        max_shift=0.9,
        base_image_seq_len=256,
        max_image_seq_len=8192,
        shift_terminal=0.02,
        time_shift_type="exponential",
    )


def build_qwen_image21_pipeline(tokenizer_dir: Path, out: Path) -> None:
    """Saves the tiny pipeline (float32 weights, fixed seed) to `out`."""
    import torch
    from diffusers import QwenImage21Pipeline

    torch.manual_seed(0)
    processor = build_processor(tokenizer_dir)
    pipe = QwenImage21Pipeline(
        scheduler=build_scheduler(),
        vae=build_vae(),
        text_encoder=build_text_encoder(processor.tokenizer),
        processor=processor,
        transformer=build_transformer(),
    )
    prefix = f"<|im_start|>system\n{pipe.sys_prompt}<|im_end|>\n"
    drop = len(processor.tokenizer(prefix)["input_ids"])
    if drop != pipe._drop_idx:
        raise RuntimeError(
            f"the chat template's system turn is {pipe._drop_idx} tokens, the pipeline's "
            f"prompt prefix {drop}: fix QWEN3_VL_CHAT_TEMPLATE"
        )
    pipe.save_pretrained(out)

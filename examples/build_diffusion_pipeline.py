"""Builds a tiny random-weight Qwen-Image text-to-image pipeline, saved as an
ordinary diffusers directory (`QwenImagePipeline.from_pretrained(path)` loads
it): a Qwen2.5-VL text encoder, the project's local tokenizer, a
`QwenImageTransformer2DModel` (whose `_tp_plan` diffusers' tensor parallelism
uses), the Qwen-Image VAE and a flow-matching scheduler.

Why Qwen-Image (v1) and not Qwen-Image 2.1, whose `encode_prompt` returns the
three values the source's script unpacks: 2.1's pipeline needs a
`Qwen3VLProcessor`, which needs a video processor, which needs torchvision; no
torchvision wheel on this machine's index imports beside torch 2.13.0's CPU
build. See docs/hf-compat.md.

Called by examples/build_artifacts.py; sizes keep a 2-core CPU fast:
2 transformer blocks of 4 heads x 16 (TP=2 splits the heads), latent
channels 16, VAE base width 8.
"""

from pathlib import Path

TEXT_HIDDEN = 64


def build_text_encoder(tokenizer):
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration

    text = dict(vocab_size=len(tokenizer), hidden_size=TEXT_HIDDEN, intermediate_size=128, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048,
                rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]},
                pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id, bos_token_id=None)
    vision = dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=TEXT_HIDDEN,
                  fullatt_block_indexes=[0])
    config = Qwen2_5_VLConfig(text_config=text, vision_config=vision, tie_word_embeddings=False)
    return Qwen2_5_VLForConditionalGeneration(config).eval()


def build_transformer():
    from diffusers import QwenImageTransformer2DModel

    return QwenImageTransformer2DModel(patch_size=2, in_channels=64, out_channels=16, num_layers=2,
                                       attention_head_dim=16, num_attention_heads=4,
                                       joint_attention_dim=TEXT_HIDDEN, axes_dims_rope=(4, 6, 6))


def build_vae():
    from diffusers import AutoencoderKLQwenImage

    return AutoencoderKLQwenImage(base_dim=8, z_dim=16, dim_mult=[1, 2, 2, 2], num_res_blocks=1)


def build_scheduler():
    from diffusers import FlowMatchEulerDiscreteScheduler

    # Qwen-Image's scheduler settings (resolution-dependent shift).
    return FlowMatchEulerDiscreteScheduler(
        num_train_timesteps=1000, shift=1.0, use_dynamic_shifting=True, base_shift=0.5, max_shift=0.9,
        base_image_seq_len=256, max_image_seq_len=8192, shift_terminal=0.02, time_shift_type="exponential")


def build_qwen_image_pipeline(tokenizer, out: Path) -> None:
    """Saves the tiny pipeline (float32 weights, fixed seed) to `out`."""
    import torch
    from diffusers import QwenImagePipeline

    torch.manual_seed(0)
    pipe = QwenImagePipeline(scheduler=build_scheduler(), vae=build_vae(), text_encoder=build_text_encoder(tokenizer),
                             tokenizer=tokenizer, transformer=build_transformer())
    pipe.save_pretrained(out)

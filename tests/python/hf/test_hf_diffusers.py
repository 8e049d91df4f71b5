"""Diffusers on neuron with the tiny local pipelines of
examples/build_artifacts.py. Qwen-Image 2.1 (the announcement's Diffusers script's
pipeline): eager on neuron gives the CPU's image; the transformer's repeated
blocks compile with the neuron backend (fullgraph, static shapes) and give the
eager image; TensorParallelConfig shards the transformer as it loads; the
source's TP script (examples/diffusers_tp.py) on 2 processes saves a PNG equal
to the one-process image within bf16 tolerance. FLUX.1: eager gives the CPU's
image, and examples/flux_tp.py (compiled, TP) gives the eager image on 1 and 2
processes."""

import numpy as np
import pytest
import torch
from helpers.dist_launch import assert_all_ok, launch, torchrun

import torch_neuronx
from examples import build_artifacts

SIZE, STEPS = 64, 2


@pytest.fixture(scope="module", autouse=True)
def release_pipelines():
    """Later tests start from an empty device."""
    yield
    import gc

    gc.collect()
    torch.neuron.empty_cache()


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return build_artifacts.main(["--out", str(tmp_path_factory.mktemp("artifacts"))]) / "qwen-image21-tiny"


@pytest.fixture(scope="module")
def embeds(model):
    from diffusers import QwenImage21Pipeline

    pipe = QwenImage21Pipeline.from_pretrained(model)
    with torch.no_grad():
        emb, mask, image_pad_mask = pipe.encode_prompt(prompt="A capybara wearing a wizard hat", device="cpu")
    assert mask is None and not image_pad_mask.any()  # one prompt: nothing padded; text only: no image slots
    return emb, mask


def render(pipe, embeds, device, generator=None) -> np.ndarray:
    emb, mask = embeds
    with torch.no_grad():
        out = pipe(
            prompt_embeds=emb.to(device),
            prompt_embeds_mask=None if mask is None else mask.to(device),
            height=SIZE,
            width=SIZE,
            num_inference_steps=STEPS,
            output_type="np",
            generator=generator or torch.Generator("cpu").manual_seed(0),
        )
    return out.images[0]


def load(model, device):
    from diffusers import QwenImage21Pipeline

    return QwenImage21Pipeline.from_pretrained(model).to(device)


def test_pipeline_runs_eagerly_on_neuron_and_gives_the_cpu_image(model, embeds):
    pipe = load(model, "neuron")
    assert pipe.transformer.device.type == "neuron" and pipe.vae.device.type == "neuron"
    torch_neuronx.clear_op_tracking()
    on_neuron = render(pipe, embeds, "neuron")
    assert torch_neuronx.get_fallback_ops() == {}  # every op, complex RoPE and 3-D convs included, on neuron
    on_cpu = render(load(model, "cpu"), embeds, "cpu")
    assert on_neuron.shape == (SIZE, SIZE, 4) and on_neuron.std() > 0.01
    np.testing.assert_allclose(on_neuron, on_cpu, atol=1e-5)


def test_a_neuron_generator_gives_reproducible_images(model, embeds):
    # Diffusers draws the latents on the CPU with the pipeline's generator,
    # also when it is a neuron generator: its Philox stream, landing on the CPU.
    pipe = load(model, "neuron")
    a, b = (render(pipe, embeds, "neuron", torch.Generator("neuron").manual_seed(7)) for _ in range(2))
    c = render(pipe, embeds, "neuron", torch.Generator("neuron").manual_seed(8))
    np.testing.assert_array_equal(a, b)
    assert np.abs(a - c).max() > 0.01


def test_compiled_repeated_blocks_give_the_eager_image(model, embeds, tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    pipe = load(model, "neuron")
    eager = render(pipe, embeds, "neuron")
    torch._dynamo.reset()
    torch_neuronx.reset_dynamo_metrics()
    torch_neuronx.clear_op_tracking()
    pipe.transformer.compile_repeated_blocks(backend="neuron", fullgraph=True, dynamic=False)
    compiled = render(pipe, embeds, "neuron")
    np.testing.assert_allclose(compiled, eager, atol=1e-3)
    first = torch_neuronx.get_dynamo_metrics()
    # Three graphs, shared by both blocks: dynamo guards on the attention's `segments`
    # (None, then a list) and on the hidden states' stride, which differ between the
    # KV-cache extraction step and the cached steps. Inductor generated kernels for each.
    assert first["graphs_compiled"] == 3 and first["kernels_generated"] > 0 and first["graph_breaks"] == 0, first
    render(pipe, embeds, "neuron")
    again = torch_neuronx.get_dynamo_metrics()
    assert again["graphs_compiled"] == first["graphs_compiled"], again  # a second image compiles nothing
    assert torch_neuronx.get_fallback_ops() == {}
    torch._dynamo.reset()


def test_tensor_parallel_config_shards_the_transformer_as_it_loads(model, tmp_path):
    results = launch("diffusers_tp_config", world=2, tmp_path=tmp_path, args=[model])
    assert_all_ok(results)


def test_diffusers_tp_script_saves_the_one_process_image_as_png(model, tmp_path):
    from PIL import Image

    images = []
    for nproc in (2, 1):
        png = tmp_path / f"tp{nproc}.png"
        torchrun(
            nproc,
            "diffusers_tp.py",
            [],
            tmp_path,
            MODEL_ID=str(model),
            DIFFUSERS_SIZE="128",
            DIFFUSERS_STEPS="3",
            OUT_PNG=str(png),
        )
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        images.append(np.asarray(Image.open(png)).astype(np.int16))
    tp2, tp1 = images
    assert tp1.shape == (128, 128, 4) and tp1.std() > 3
    diff = np.abs(tp2 - tp1)
    assert diff.mean() < 1.5 and diff.max() <= 16, (diff.mean(), diff.max())  # bf16 rounding, not a wrong shard


def test_flux_renders_eagerly_compiled_and_with_tensor_parallelism(model, tmp_path):
    """FLUX.1 (CLIP and T5 text encoders): eager on neuron gives the CPU's image;
    examples/flux_tp.py (compiled repeated blocks, TensorParallelConfig) gives
    the eager image on one process and on two (TP=2) within bf16 rounding."""
    from diffusers import FluxPipeline
    from PIL import Image

    flux = model.parent / "flux-tiny"
    pipe = FluxPipeline.from_pretrained(flux)
    with torch.no_grad():
        emb, pooled, text_ids = pipe.encode_prompt(
            prompt="A capybara wearing a wizard hat", prompt_2=None, device="cpu"
        )
    assert text_ids.shape == (emb.shape[1], 3)

    def render(pipe, device, output_type="np"):
        with torch.no_grad():
            return pipe(
                prompt_embeds=emb.to(device, pipe.dtype),
                pooled_prompt_embeds=pooled.to(device, pipe.dtype),
                height=SIZE,
                width=SIZE,
                num_inference_steps=STEPS,
                output_type=output_type,
                generator=torch.Generator("cpu").manual_seed(0),
            ).images[0]

    on_cpu = render(pipe, "cpu")
    torch_neuronx.clear_op_tracking()
    on_neuron = render(pipe.to("neuron"), "neuron")
    assert torch_neuronx.get_fallback_ops() == {}
    assert on_neuron.shape == (SIZE, SIZE, 3) and on_neuron.std() > 0.01
    np.testing.assert_allclose(on_neuron, on_cpu, atol=1e-5)

    eager_bf16 = np.asarray(render(pipe.to(torch.bfloat16), "neuron", output_type="pil")).astype(np.int16)
    for nproc in (1, 2):
        png = tmp_path / f"flux{nproc}.png"
        torchrun(
            nproc,
            "flux_tp.py",
            [],
            tmp_path,
            MODEL_ID=str(flux),
            DIFFUSERS_SIZE=str(SIZE),
            DIFFUSERS_STEPS=str(STEPS),
            OUT_PNG=str(png),
        )
        diff = np.abs(np.asarray(Image.open(png)).astype(np.int16) - eager_bf16)
        assert diff.mean() < 1.5 and diff.max() <= 16, (nproc, diff.mean(), diff.max())  # bf16 rounding

"""Diffusers on neuron with the tiny local Qwen-Image pipeline of
examples/build_artifacts.py: eager on neuron gives the CPU's image; the
transformer's repeated blocks compile with the neuron backend (fullgraph,
static shapes) and give the eager image; TensorParallelConfig shards the
transformer as it loads; the source's TP script (examples/diffusers_tp.py)
on 2 processes saves a PNG equal to the one-process image within bf16
tolerance."""

import sys

import numpy as np
import pytest
import torch
import torch_neuronx

from dist_launch import EXAMPLES, assert_all_ok, launch, torchrun

sys.path.insert(0, str(EXAMPLES))
import build_artifacts  # noqa: E402

SIZE, STEPS = 64, 2


@pytest.fixture(scope="module", autouse=True)
def release_rope_caches():
    """Qwen-Image's RoPE helpers are `functools.lru_cache`d methods: the caches
    keep each transformer and its device tensors for the life of the process
    (on any device). Cleared after this module so that later tests start from
    an empty device."""
    yield
    import gc

    import diffusers.models.transformers.transformer_qwenimage as qwenimage

    for cls in [c for c in vars(qwenimage).values() if isinstance(c, type)]:
        for fn in vars(cls).values():
            for cell in getattr(fn, "__closure__", None) or ():
                if hasattr(cell.cell_contents, "cache_clear"):
                    cell.cell_contents.cache_clear()
    gc.collect()
    torch.neuron.empty_cache()


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return build_artifacts.main(["--out", str(tmp_path_factory.mktemp("artifacts"))]) / "qwen-image-tiny"


@pytest.fixture(scope="module")
def embeds(model):
    from diffusers import QwenImagePipeline

    pipe = QwenImagePipeline.from_pretrained(model)
    with torch.no_grad():
        emb, mask = pipe.encode_prompt(prompt="A capybara wearing a wizard hat", device="cpu")
    return emb, mask


def render(pipe, embeds, device, generator=None) -> np.ndarray:
    emb, mask = embeds
    with torch.no_grad():
        out = pipe(prompt_embeds=emb.to(device), prompt_embeds_mask=None if mask is None else mask.to(device),
                   height=SIZE, width=SIZE, num_inference_steps=STEPS, output_type="np",
                   generator=generator or torch.Generator("cpu").manual_seed(0))
    return out.images[0]


def load(model, device):
    from diffusers import QwenImagePipeline

    return QwenImagePipeline.from_pretrained(model).to(device)


def test_pipeline_runs_eagerly_on_neuron_and_gives_the_cpu_image(model, embeds):
    pipe = load(model, "neuron")
    assert pipe.transformer.device.type == "neuron" and pipe.vae.device.type == "neuron"
    torch_neuronx.clear_op_tracking()
    on_neuron = render(pipe, embeds, "neuron")
    assert torch_neuronx.get_fallback_ops() == {}  # every op, complex RoPE and 3-D convs included, on neuron
    on_cpu = render(load(model, "cpu"), embeds, "cpu")
    assert on_neuron.shape == (SIZE, SIZE, 3) and on_neuron.std() > 0.01
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
    m = torch_neuronx.get_dynamo_metrics()
    # One graph serves both blocks and every step; Inductor generated kernels for it.
    assert m["graphs_compiled"] == 1 and m["kernels_generated"] > 0 and m["recompilations"] == 0, m
    assert torch_neuronx.get_fallback_ops() == {}
    torch._dynamo.reset()


def test_tensor_parallel_config_shards_the_transformer_as_it_loads(model, tmp_path):
    results = launch(f"""
        init()
        from torch.distributed.device_mesh import DeviceMesh
        from torch.distributed.tensor import DTensor, Shard, Replicate
        import torch_neuronx
        from diffusers import QwenImageTransformer2DModel, TensorParallelConfig
        mesh = DeviceMesh("neuron", list(range(WORLD)))
        t = QwenImageTransformer2DModel.from_pretrained({str(model)!r}, subfolder="transformer",
            torch_dtype=torch.bfloat16, parallel_config=TensorParallelConfig(mesh=mesh))
        attn = t.transformer_blocks[0].attn
        q, out = attn.to_q.weight, attn.to_out[0].weight
        assert isinstance(q, DTensor) and q.placements == (Shard(0),), q
        assert isinstance(out, DTensor) and out.placements == (Shard(1),), out
        assert q.to_local().shape == (32, 64) and out.to_local().shape == (64, 32), (q.to_local().shape, out.to_local().shape)
        assert q.to_local().device == torch.device("neuron", RANK), q.to_local().device
        assert all(p.device.type == "neuron" for p in t.parameters())
        print("ok")
    """, world=2, tmp_path=tmp_path)
    assert_all_ok(results)


def test_diffusers_tp_script_saves_the_one_process_image_as_png(model, tmp_path):
    from PIL import Image

    images = []
    for nproc in (2, 1):
        png = tmp_path / f"tp{nproc}.png"
        torchrun(nproc, "diffusers_tp.py", [], tmp_path, MODEL_ID=str(model), DIFFUSERS_SIZE="128",
                 DIFFUSERS_STEPS="3", OUT_PNG=str(png))
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        images.append(np.asarray(Image.open(png)).astype(np.int16))
    tp2, tp1 = images
    assert tp1.shape == (128, 128, 3) and tp1.std() > 3
    diff = np.abs(tp2 - tp1)
    assert diff.mean() < 1.5 and diff.max() <= 16, (diff.mean(), diff.max())  # bf16 rounding, not a wrong shard

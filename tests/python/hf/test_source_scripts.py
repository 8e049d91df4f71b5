"""The example scripts that mirror the announcement's three scripts cannot drift from them.

`tests/python/source_scripts/*.py.txt` hold the brief's scripts verbatim (the
mission brief, ../shared/docs/mission.md, lives outside this repository; where
it is present, the copies are checked against it). Each example under
`examples/` must equal its source text line for line, comments and blank lines
aside, except for the changes listed here: the model id, the dataset, the sizes and
the process count, each as a source line and the lines that replace it.
Any other difference fails and names the lines.
"""

import difflib
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
SOURCES = pathlib.Path(__file__).parents[1] / "source_scripts"
BRIEF = ROOT.parent / "shared" / "docs" / "mission.md"

# Each entry: a line of the announcement's text -> the lines the example has in its place.
GENERATE_CHANGES = {
    "import torch, torch.distributed as dist": ("import os", "import torch, torch.distributed as dist"),
    'MODEL_ID = "<a Qwen3-style causal LM>"; MAX_SEQ_LEN = 1024; PREFILL_CHUNK_SIZE = 512': (
        'MODEL_ID = os.environ.get("MODEL_ID", "build/artifacts/qwen3-tiny"); MAX_SEQ_LEN = 1024; '
        "PREFILL_CHUNK_SIZE = 512",
    ),
}

DIFFUSERS_CHANGES = {
    "import torch, torch.distributed as dist, torch_neuronx": (
        "import os",
        "import torch, torch.distributed as dist, torch_neuronx",
    ),
    "from diffusers import <Pipeline>, <Transformer2DModel>, TensorParallelConfig": (
        "from diffusers import QwenImage21Pipeline, QwenImage21Transformer2DModel, TensorParallelConfig",
        'model = os.environ.get("MODEL_ID", "build/artifacts/qwen-image21-tiny")',
        'size = int(os.environ.get("DIFFUSERS_SIZE", "1024")); steps = int(os.environ.get("DIFFUSERS_STEPS", "40"))',
    ),
    'mesh = DeviceMesh("neuron", list(range(8)))': ('mesh = DeviceMesh("neuron", list(range(dist.get_world_size())))',),
    'transformer = <Transformer2DModel>.from_pretrained(model, subfolder="transformer",': (
        'transformer = QwenImage21Transformer2DModel.from_pretrained(model, subfolder="transformer",',
    ),
    "pipe = <Pipeline>.from_pretrained(model, transformer=transformer, torch_dtype=torch.bfloat16)": (
        "pipe = QwenImage21Pipeline.from_pretrained(model, transformer=transformer, torch_dtype=torch.bfloat16)",
    ),
    "height=1024, width=1024, num_inference_steps=40,": ("height=size, width=size, num_inference_steps=steps,",),
    'image.save("out.png")': ('image.save(os.environ.get("OUT_PNG", "out.png"))',),
}

CASES = {
    "generate_tp.py": GENERATE_CHANGES,
    "sft_neuron_example.py": {},
    "diffusers_tp.py": DIFFUSERS_CHANGES,
}


def code_lines(text):
    """The lines that carry code: stripped, without blank or comment-only lines."""
    lines = (line.strip() for line in text.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def apply_changes(source, changes):
    """The announcement's lines with each listed line replaced; every listed line must occur once."""
    for line in changes:
        assert source.count(line) == 1, f"the announcement's text has {source.count(line)} lines {line!r}"
    out = []
    for line in source:
        out.extend(changes.get(line, (line,)))
    return out


def unexplained_differences(source, example, changes):
    expected = apply_changes(source, changes)
    return list(difflib.unified_diff(expected, example, "source with the listed changes", "example", lineterm=""))


@pytest.mark.parametrize("name", sorted(CASES))
def test_example_is_the_source_script(name):
    source = code_lines((SOURCES / f"{name}.txt").read_text())
    example = code_lines((ROOT / "examples" / name).read_text())
    extra = unexplained_differences(source, example, CASES[name])
    assert not extra, (
        f"examples/{name} differs from the announcement's script beyond the model id, data, sizes "
        "and process count:\n" + "\n".join(extra)
    )


def test_unlisted_change_is_caught():
    """The check fails on an edit it does not list (it is not vacuous)."""
    source = code_lines((SOURCES / "sft_neuron_example.py.txt").read_text())
    edited = [line.replace("trainer.end()", "") for line in source]
    assert unexplained_differences(source, edited, {}) != []


@pytest.mark.skipif(not BRIEF.exists(), reason=f"the mission brief is not beside this checkout ({BRIEF})")
def test_copies_equal_the_brief():
    blocks = re.findall(r"```python\n(.*?)```", BRIEF.read_text(), re.S)
    names = ["generate_tp.py", "sft_neuron_example.py", "diffusers_tp.py"]
    assert len(blocks) == len(names)
    for name, block in zip(names, blocks):
        assert (SOURCES / f"{name}.txt").read_text() == block, name

"""The Hugging Face `kernels` library on neuron with the project's NKI kernel
repositories and no hub: the pins integrate (Transformers' kernel hub is on),
each repository loads with get_local_kernel and with LOCAL_KERNELS +
get_kernel and passes the library's validation (metadata, dependencies,
digest), the layer flags mean what the library says at this pin, and broken
repositories give the library's or the project's clear errors."""

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn as nn
from helpers import kernel_repos

import torch_neuronx
from torch_neuronx.kernel_builder import KernelRepoError, build

kernels = pytest.importorskip("kernels")


@pytest.fixture(scope="module")
def repos():
    return kernel_repos.built()


def test_transformers_kernel_hub_integration_is_on():
    # Transformers turns use_kernel_forward_from_hub into a no-op unless the
    # installed kernels is in [KERNELS_MIN_VERSION, KERNELS_MAX_VERSION).
    from packaging.version import Version
    from transformers.integrations import hub_kernels
    from transformers.models.llama.modeling_llama import LlamaRMSNorm
    from transformers.utils import import_utils

    v = Version(kernels.__version__)
    assert Version(import_utils.KERNELS_MIN_VERSION) <= v < Version(import_utils.KERNELS_MAX_VERSION)
    assert import_utils.is_kernels_available() and hub_kernels._kernels_enabled
    assert LlamaRMSNorm.kernel_layer_name == "RMSNorm"  # the decorator took effect
    from kernels.backends import _backend

    assert _backend().name == "neuron"


@pytest.mark.parametrize("name", kernel_repos.NAMES)
def test_repository_loads_locally_and_through_local_kernels(name, repos, monkeypatch):
    from kernels._rust import Backend, Build, Metadata

    path = repos[name]
    assert Build.open(path).general.backends == [Backend.Neuron]
    meta = Metadata.read_from_file(path / "build" / "torch-neuron" / "metadata.json")
    assert meta.backend.backend_type == Backend.Neuron and meta.python_depends == ["nki"]
    assert meta.digest is not None
    local = kernels.get_local_kernel(path)
    assert local.layers is not None and local.__name__ == meta.id
    monkeypatch.setenv("LOCAL_KERNELS", kernel_repos.local_kernels())
    hub = kernels.get_kernel(f"{kernel_repos.ORG}/{name}", version=1)
    assert hub is local  # one build, one module
    loaded = {k.metadata.id: k for k in kernels.get_loaded_kernels()}
    assert meta.id in loaded


def test_library_cli_describes_the_repositories(repos):
    cli = Path(sys.executable).with_name("kernels")
    info = subprocess.run([cli, "info", str(repos["rmsnorm-nki"]), "--json"], capture_output=True, text=True)
    assert info.returncode == 0, info.stderr
    assert json.loads(info.stdout)["name"] == "rmsnorm-nki"
    api = subprocess.run([cli, "describe-api", str(repos["vit-nki"]), "--json"], capture_output=True, text=True)
    assert api.returncode == 0, api.stderr
    layers = {layer["name"]: layer["attributes"] for layer in json.loads(api.stdout)["layers"]}
    assert layers["GeLU"] == {"has_backward": True, "can_torch_compile": True}


def test_every_layer_declares_compile_and_backward(repos):
    for name in kernel_repos.NAMES:
        mod = kernels.get_local_kernel(repos[name])
        for layer_name in mod.layers.__all__:
            if layer_name.endswith("Layout"):
                continue
            layer = getattr(mod.layers, layer_name)
            assert layer.can_torch_compile is True and layer.has_backward is True, (name, layer_name)


# ------------------------------------------------------------- broken repositories
def _copy(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / src.name
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("build", "__pycache__"))
    return dst


def test_a_wrong_metadata_json_gives_the_librarys_error(repos, tmp_path):
    repo = _copy(repos["rmsnorm-nki"], tmp_path)
    meta_path = build(repo) / "metadata.json"
    meta = json.loads(meta_path.read_text())
    del meta["license"]
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="license"):
        kernels.get_local_kernel(repo)


def test_a_missing_dependency_gives_the_librarys_error(repos, tmp_path):
    repo = _copy(repos["silu-and-mul-nki"], tmp_path)
    toml = repo / "build.toml"
    toml.write_text(toml.read_text().replace('python-depends = ["nki"]', 'python-depends = ["nki", "nvshmem"]'))
    with pytest.raises(KernelRepoError, match="nvshmem"):  # the library's build.toml parser refuses it
        build(repo)
    toml.write_text(toml.read_text().replace('"nki", "nvshmem"', '"nki"'))
    meta_path = build(repo) / "metadata.json"
    meta = json.loads(meta_path.read_text())
    meta["python-depends"] = ["nki", "einops"]  # a dependency the library knows
    meta_path.write_text(json.dumps(meta))
    if importlib.util.find_spec("einops") is not None:
        pytest.skip("einops is installed here: the check needs a known dependency that is missing")
    with pytest.raises(ImportError, match="requires Python dependency `einops`"):
        kernels.get_local_kernel(repo)


def test_a_file_changed_after_the_build_fails_the_digest(repos, tmp_path):
    repo = _copy(repos["rmsnorm-nki"], tmp_path)
    variant = build(repo)
    with open(variant / "layers" / "__init__.py", "a") as f:
        f.write("\n# edited\n")
    with pytest.raises(RuntimeError, match="do not match the digest"):
        kernels.get_local_kernel(repo)


def test_a_package_that_does_not_import_leaves_no_variant(tmp_path):
    repo = _repo(tmp_path, "broken-nki", init="import no_such_module_here\n")
    with pytest.raises(KernelRepoError, match="no_such_module_here"):
        build(repo)
    assert not (repo / "build" / "torch-neuron").exists() and not list((repo / "build").iterdir())


def test_a_build_toml_without_neuron_is_refused(repos, tmp_path):
    repo = _copy(repos["rmsnorm-nki"], tmp_path)
    toml = repo / "build.toml"
    toml.write_text(toml.read_text().replace('backends = ["neuron"]', 'backends = ["cpu"]'))
    with pytest.raises(KernelRepoError, match="neuron"):
        build(repo)


def test_a_kernel_over_the_chips_limits_fails_with_the_limit(tmp_path):
    from torch_neuronx.nki import NKIError

    repo = _repo(
        tmp_path,
        "wide-nki",
        init=(
            "import nki\nimport nki.language as nl\nfrom . import layers\n\n\n"
            "@nki.jit\ndef copy_rows(x):  # one tile of all rows: more than 128 partitions\n"
            "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
            "    nl.store(out[:, :], value=nl.load(x[:, :]))\n    return out\n"
        ),
    )
    wide = kernels.get_local_kernel(build(repo).parents[1])
    with pytest.raises(NKIError, match="partition dimension 256 .* exceeds the limit of 128"):
        wide.copy_rows(torch.randn(256, 64, device="neuron"))


# ------------------------------------------------- layer flags at this pin (0.18.3)
class _Double(nn.Module):
    def forward(self, x):
        return x * 2


def _repo(tmp_path, name, init="from . import layers\n", layers="") -> Path:
    """A kernel repository `name` in tmp_path with the given package files."""
    repo = tmp_path / name
    pkg = repo / "torch-ext" / name.replace("-", "_")
    (pkg / "layers").mkdir(parents=True)
    (repo / "build.toml").write_text(
        (kernel_repos.REPOS / "rmsnorm-nki" / "build.toml").read_text().replace("rmsnorm-nki", name)
    )
    (pkg / "__init__.py").write_text(init)
    (pkg / "layers" / "__init__.py").write_text(layers)
    return repo


def _flag_repo(tmp_path, **flags) -> Path:
    short = {"has_backward": "hb", "can_torch_compile": "tc"}
    name = "-".join(["double"] + [f"{short[k]}{int(v)}" for k, v in flags.items()])
    body = "".join(f"    {k} = {v}\n" for k, v in flags.items())
    repo = _repo(
        tmp_path,
        name,
        layers="import torch.nn as nn\n\n\nclass Double(nn.Module):\n"
        + body
        + "\n    def forward(self, x):\n        return x * 3  # marks the kernel's forward\n",
    )
    build(repo)
    return repo


@pytest.mark.parametrize(
    "flags, mode, kernel_runs",
    [
        ({"has_backward": False}, "INFERENCE", True),
        ({"has_backward": False}, "TRAINING", False),  # forward-only: the original is kept in training
        ({}, "TRAINING", True),  # has_backward defaults to True
        ({}, "INFERENCE | TORCH_COMPILE", False),  # can_torch_compile defaults to False
        ({"can_torch_compile": True}, "INFERENCE | TORCH_COMPILE", True),
    ],
)
def test_layer_flags_decide_the_swap(flags, mode, kernel_runs, tmp_path):
    from kernels import LocalLayerRepository, Mode, kernelize, use_kernel_forward_from_hub, use_kernel_mapping

    repo = _flag_repo(tmp_path, **flags)
    layer = use_kernel_forward_from_hub("Double")(type("Doubler", (_Double,), {}))().to("neuron")
    m = eval(mode, {}, vars(Mode))
    with use_kernel_mapping({"Double": {"neuron": LocalLayerRepository(repo_path=repo, layer_name="Double")}}):
        kernelize(layer, device="neuron", mode=m)
    out = layer(torch.ones(2, device="neuron")).cpu()
    assert torch.equal(out, torch.full((2,), 3.0 if kernel_runs else 2.0))


def test_kernel_runs_are_counted_as_executed_ops(repos):
    rms = kernels.get_local_kernel(repos["rmsnorm-nki"])
    torch_neuronx.clear_op_tracking()
    rms.rmsnorm(torch.randn(4, 8, device="neuron"), torch.ones(8, device="neuron"), 1e-6)
    assert torch_neuronx.get_executed_ops()["nki::rmsnorm_kernel"] == 1
    torch_neuronx.clear_op_tracking()
    assert "nki::rmsnorm_kernel" not in torch_neuronx.get_executed_ops()

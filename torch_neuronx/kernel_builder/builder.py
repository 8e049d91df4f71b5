"""Builds the `build/torch-neuron/` variant of a kernel repository, as
Hugging Face's `kernel-builder` does for pure-Python (noarch) kernels, with no
Nix and no network.

Input, the layout `kernel-builder` reads:

    <repo>/build.toml                  [general] name, version, license,
                                       backends = ["neuron"], [general.neuron]
                                       python-depends = ["nki"], [torch-noarch]
    <repo>/torch-ext/<python_name>/    the package: __init__.py, layers, ...

Output, the layout the `kernels` library loads (`get_local_kernel(repo)`,
`LOCAL_KERNELS=repo_id=<repo>`, `LocalLayerRepository(repo_path=<repo>)`):

    <repo>/build/torch-neuron/         the package's files, plus
        _ops.py                        kernel-builder's noarch template: `ops`
                                       is torch.ops.<id>, `add_op_namespace_prefix`
        symbols.json                   the public functions and layers (with
                                       has_backward / can_torch_compile), for
                                       `kernels describe-api`
        metadata.json                  id, name, version, license,
                                       python-depends, backend {"type": "neuron"},
                                       digest (sha256 of every file)

`build.toml` is parsed and validated by the `kernels` library itself
(`kernels._rust.Build.open`), so a bad one fails with the library's message.
The id (`_<python_name>_neuron_<hash>`) changes with the sources, as
kernel-builder's does with the git revision: a rebuilt kernel never collides
with a loaded one. As kernel-builder's "get_kernel check", the build loads the
variant with `kernels.get_local_kernel` in a fresh interpreter (which also
lists its symbols): a package that does not import fails the build.

    python -m torch_neuronx.kernel_builder build <repo> [<repo> ...]
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

VARIANT = "torch-neuron"

_OPS_PY = '''import torch


def get_backend() -> str:
    """Detect the backend by inspecting torch."""
    import torch

    if hasattr(torch.backends, "tpu"):
        return "tpu"
    elif hasattr(torch, "neuron"):
        # Sorted before specific Torch builds: the Neuron extension can be
        # loaded into e.g. CUDA Torch builds.
        return "neuron"
    elif torch.version.cuda is not None:
        return "cuda"
    elif torch.version.hip is not None:
        return "rocm"
    elif torch.backends.mps.is_available():
        return "metal"
    elif hasattr(torch.version, "xpu") and torch.version.xpu is not None:
        return "xpu"
    else:
        return "cpu"


def _find_ops_name() -> str:
    kernel_name = "{kernel_name}"
    unique_id = "{unique_id}"
    backend = get_backend()
    return f"_{{kernel_name}}_{{backend}}_{{unique_id}}"


_OPS_NAME = _find_ops_name()

ops = getattr(torch.ops, _OPS_NAME)


def add_op_namespace_prefix(op_name: str) -> str:
    """Prefix op by namespace."""
    return f"{{_OPS_NAME}}::{{op_name}}"
'''


# Run in a fresh interpreter: loading registers the kernel's ops, which a
# process may do once per kernel id.
_DESCRIBE_PY = """
import inspect, json, sys
from pathlib import Path
import torch
import kernels
k = kernels.get_local_kernel(Path(sys.argv[1]))  # a variant directory holding metadata.json
def signature(f):
    try:
        return str(inspect.signature(f))
    except (TypeError, ValueError):
        return None
names = getattr(k, "__all__", [n for n in dir(k) if not n.startswith("_")])
functions = [{"name": n, "signature": signature(getattr(k, n))} for n in names
             if callable(getattr(k, n)) and not isinstance(getattr(k, n), type)]
layers = []
for n in getattr(k.layers, "__all__", []):
    c = getattr(k.layers, n)
    if isinstance(c, type) and issubclass(c, torch.nn.Module):
        attrs = {a: getattr(c, a, None) for a in ("has_backward", "can_torch_compile")}
        layers.append({"name": n, "attributes": attrs})
print(json.dumps({"schema_version": 1, "functions": functions, "layers": layers}))
"""


class KernelRepoError(ValueError):
    """A kernel repository that cannot be built; the message names the file."""


def _source_files(package: Path) -> list[Path]:
    return sorted(p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")


def _unique_id(repo: Path, files: list[Path]) -> str:
    h = hashlib.sha256((repo / "build.toml").read_bytes())
    for f in files:
        h.update(str(f.relative_to(repo)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:10]


def _digest(variant: Path) -> dict:
    """kernels-data's `Digest::hash_variant`: sha256, base64, of every file but
    the top-level metadata.json and bytecode."""
    files = {}
    for p in _source_files(variant):
        rel = p.relative_to(variant).as_posix()
        if rel in ("metadata.json", "metadata.json.sigstore"):
            continue
        files[rel] = base64.b64encode(hashlib.sha256(p.read_bytes()).digest()).decode()
    return {"algorithm": "sha256", "files": files}


def build(repo: str | Path) -> Path:
    """Writes `<repo>/build/torch-neuron/` and returns its path."""
    from kernels._rust import Backend, Build

    repo = Path(repo).resolve()
    toml_path = repo / "build.toml"
    if not toml_path.is_file():
        raise KernelRepoError(f"{repo} has no build.toml; a kernel repository needs one (see docs/kernels.md)")
    try:
        parsed = Build.open(repo)
    except ValueError as e:
        raise KernelRepoError(f"{toml_path}: {e}") from e
    if Backend.Neuron not in parsed.general.backends:
        raise KernelRepoError(
            f'{toml_path}: backends = {parsed.general.backends} does not list "neuron"; add it to [general] backends'
        )
    general = tomllib.loads(toml_path.read_text())["general"]
    name = general["name"]
    python_name = name.replace("-", "_")
    package = repo / "torch-ext" / python_name
    if not (package / "__init__.py").is_file():
        raise KernelRepoError(f"{repo}: no package at torch-ext/{python_name}/__init__.py for kernel {name!r}")

    files = _source_files(package)
    unique = _unique_id(repo, files)
    variant = repo / "build" / VARIANT
    staging = repo / "build" / f".{VARIANT}.partial"  # becomes the variant only once complete
    if staging.exists():
        shutil.rmtree(staging)
    try:
        for f in files:
            dst = staging / f.relative_to(package)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, dst)
        (staging / "_ops.py").write_text(_OPS_PY.format(kernel_name=python_name, unique_id=unique))
        depends = list(general.get("python-depends", [])) + list(general.get("neuron", {}).get("python-depends", []))
        metadata = {
            "id": f"_{python_name}_neuron_{unique}",
            "name": name,
            "version": general["version"],
            "license": general["license"],
            "python-depends": depends,
            "backend": {"type": "neuron"},
        }
        (staging / "metadata.json").write_text(json.dumps(metadata, indent=2) + "\n")
        (staging / "symbols.json").write_text(json.dumps(_describe(repo, staging), indent=2) + "\n")
        metadata["digest"] = _digest(staging)
        (staging / "metadata.json").write_text(json.dumps(metadata, indent=2) + "\n")
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if variant.exists():
        shutil.rmtree(variant)
    staging.rename(variant)
    return variant


def _describe(repo: Path, variant: Path) -> dict:
    """Loads `variant` as the `kernels` library would and lists its symbols."""
    done = subprocess.run([sys.executable, "-c", _DESCRIBE_PY, str(variant)], capture_output=True, text=True)
    if done.returncode != 0:
        raise KernelRepoError(
            f"{repo}: the built variant does not load with kernels.get_local_kernel:\n{done.stderr.strip()}"
        )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] != "build":
        print("usage: python -m torch_neuronx.kernel_builder build <repo> [<repo> ...]", file=sys.stderr)
        return 2
    for repo in argv[1:]:
        try:
            print(f"built {build(repo)}")
        except KernelRepoError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
    return 0

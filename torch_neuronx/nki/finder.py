"""Makes `import nki` give `torch_neuronx.nki` unless AWS's NKI is installed
(then AWS's wins; ours stays reachable as `torch_neuronx.nki`).

AWS's package is recognised by what it provides, not by its distribution
name (PyPI also has unrelated placeholder packages named `nki`): a package
`nki` found on the path that has both `isa` and `language` submodules and
defines `jit` is AWS's, and this finder steps aside. Anything else named `nki`
is shadowed by ours.

Standard library only: a `.pth` file installed next to the package imports
this module at interpreter start (as `_torch_neuronx_nki_finder`), so
`import nki` works before `import torch`; importing `torch_neuronx` installs
it too. Importing `nki` then imports torch and torch_neuronx.
"""

import importlib
import importlib.machinery
import os
import sys

_OURS = "torch_neuronx.nki"


def _provides_nki(location: str) -> bool:
    def has(name):
        return any(os.path.exists(os.path.join(location, name + ext)) for ext in ("", ".py", ".pyc")) or any(
            f.startswith(name + ".") and f.endswith((".so", ".pyd")) for f in _listdir(location)
        )

    if not (has("isa") and has("language")):
        return False
    for f in ("__init__.py", "__init__.pyi"):
        p = os.path.join(location, f)
        if os.path.exists(p):
            with open(p, encoding="utf-8", errors="replace") as fh:
                if "jit" in fh.read():
                    return True
    return any(f.startswith("__init__.") and f.endswith((".so", ".pyd")) for f in _listdir(location))


def _listdir(location):
    try:
        return os.listdir(location)
    except OSError:
        return []


class _Alias:
    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        return importlib.import_module(self.target)

    def exec_module(self, module):
        pass


class NkiFinder:
    """Resolves `nki` and `nki.*` to `torch_neuronx.nki` when AWS's is absent."""

    def find_spec(self, name, path=None, target=None):
        if name != "nki" and not name.startswith("nki."):
            return None
        if name == "nki":
            if aws_nki_spec() is not None:
                return None
        else:
            parent = sys.modules.get("nki")
            if parent is None or getattr(parent, "__name__", None) != _OURS:
                return None
        return importlib.machinery.ModuleSpec(name, _Alias(_OURS + name[3:]), is_package=name == "nki")


def aws_nki_spec():
    """The spec of AWS's NKI package if one is installed, else None."""
    for finder in sys.meta_path:
        if type(finder).__name__ == "NkiFinder" or not hasattr(finder, "find_spec"):
            continue
        try:
            spec = finder.find_spec("nki", None)
        except Exception:
            continue
        if spec is None:
            continue
        if any(_provides_nki(loc) for loc in (spec.submodule_search_locations or [])):
            return spec
        return None  # a package named nki that is not AWS's: ours shadows it
    return None


def install() -> None:
    if not any(type(f).__name__ == "NkiFinder" for f in sys.meta_path):
        sys.meta_path.insert(0, NkiFinder())


install()

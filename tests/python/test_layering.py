"""The layering rules of docs/architecture.md, checked on the sources."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]


def sources(folder: str, *suffixes: str):
    return [p for p in (ROOT / folder).rglob("*") if p.suffix in suffixes]


def test_hal_includes_no_torch():
    bad = [p for p in sources("hal", ".h", ".cpp") if re.search(r'#include\s*[<"](torch|ATen|c10)/', p.read_text())]
    assert not bad, f"hal/ must stay free of torch headers: {bad}"


def test_only_bindings_include_python():
    # c10d's headers (torch/csrc/distributed/c10d/) are plain C++: the backend may use them.
    bad = [p for p in sources("csrc", ".h", ".cpp")
           if "bindings" not in p.parts
               and re.search(r"#include\s*[<\"](Python\.h|pybind11/|torch/csrc/(?!distributed/c10d/))", p.read_text())]
    assert not bad, f"only csrc/bindings may include Python or pybind11: {bad}"


def test_files_stay_small():
    big = [(p, n) for p in sources("hal", ".h", ".cpp") + sources("csrc", ".h", ".cpp") + sources("torch_neuronx", ".py")
           if (n := len(p.read_text().splitlines())) > 400]
    assert not big, f"runtime files stay under 400 lines; split by concept: {big}"

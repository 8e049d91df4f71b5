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
    # c10d's headers (torch/csrc/distributed/c10d/) and the PrivateUse1 profiler
    # registry (torch/csrc/profiler/standalone/) are plain C++: they may be used.
    bad = [
        p
        for p in sources("csrc", ".h", ".cpp")
        if "bindings" not in p.parts
        and re.search(
            r"#include\s*[<\"](Python\.h|pybind11/|torch/csrc/(?!distributed/c10d/|profiler/standalone/))",
            p.read_text(),
        )
    ]
    assert not bad, f"only csrc/bindings may include Python or pybind11: {bad}"


def test_files_stay_small():
    big = [
        (p, n)
        for p in sources("hal", ".h", ".cpp") + sources("csrc", ".h", ".cpp") + sources("torch_neuronx", ".py")
        if (n := len(p.read_text().splitlines())) > 400
    ]
    assert not big, f"runtime files stay under 400 lines; split by concept: {big}"


def includes(path: pathlib.Path) -> list[str]:
    return re.findall(r'#include\s*"([^"]+)"', path.read_text())


def test_layers_include_only_below():
    # The layers of docs/architecture.md, bottom up: a folder may include its
    # own files and those of the folders listed for it.
    allowed = {
        "runtime": {"runtime"},
        "profiler": {"runtime", "profiler"},  # observers of device activity (trace, strict mode)
        "dispatch": {"runtime", "profiler", "dispatch"},
        "ops": {"runtime", "profiler", "dispatch", "ops"},
        "amp": {"runtime", "dispatch", "amp"},
        "distributed": {"runtime", "profiler", "distributed"},  # never op code: host access is runtime's
    }
    bad = []
    for layer, ok in allowed.items():
        for p in sources(f"csrc/{layer}", ".h", ".cpp"):
            for inc in includes(p):
                folder = inc.split("/")[0] if "/" in inc else layer
                if folder not in ok and not inc.startswith("neuron_hal/"):
                    bad.append(f"{p.relative_to(ROOT)} includes {inc}")
    assert not bad, bad


def test_distributed_folders_include_only_below():
    # csrc/distributed, bottom up: the collective table's types (collectives/
    # headers), the transports (one host; across hosts, which uses one host's
    # within each host), the c10d process group. The table's .cpp files bind
    # its entries to the transports, so they may include the transports'
    # headers; no header of the table includes a transport.
    allowed = {
        "collectives": {"collectives"},
        "onehost": {"collectives", "onehost"},
        "multihost": {"collectives", "onehost", "multihost"},
        "c10d": {"collectives", "onehost", "multihost", "c10d"},
    }
    bad = []
    for folder, ok in allowed.items():
        for p in sources(f"csrc/distributed/{folder}", ".h", ".cpp"):
            mine = ok | ({"onehost", "multihost"} if folder == "collectives" and p.suffix == ".cpp" else set())
            for inc in includes(p):
                parts = inc.split("/")
                if parts[0] == "distributed" and parts[1] not in mine:
                    bad.append(f"{p.relative_to(ROOT)} includes {inc}")
    assert not bad, bad
    loose = [p.name for p in (ROOT / "csrc/distributed").iterdir() if p.is_file()]
    assert not loose, f"every file of csrc/distributed lives in one of {sorted(allowed)}: {loose}"


def test_only_runtime_reads_host_addressability():
    # runtime/NeuronHostAccess decides whether host code may touch device
    # memory; everything else asks it (host_addressable, HostAccess).
    bad = [
        p
        for p in sources("csrc", ".h", ".cpp")
        if "NHAL_DEVICE_CAP_HOST_ADDRESSABLE" in p.read_text() and p.parent.name != "runtime"
    ]
    bad += [p for p in sources("torch_neuronx", ".py") if "capabilities" in p.read_text()]
    assert not bad, f"only csrc/runtime/NeuronHostAccess reads the capability: {bad}"

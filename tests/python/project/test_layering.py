"""The layering rules of docs/architecture.md, checked on the sources."""

import ast
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[3]


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


def test_folders_stay_small():
    # About 15 files to a folder (a README aside): past that, split by concept.
    roots = ("csrc", "hal", "torch_neuronx", "tests", "benchmarks", "examples", "tools", "docs")
    big = {}
    for root in roots:
        for folder in [ROOT / root, *(ROOT / root).rglob("*")]:
            if not folder.is_dir() or "__pycache__" in folder.parts or "build" in folder.parts:
                continue
            files = [f for f in folder.iterdir() if f.is_file() and f.name != "README.md" and f.suffix != ".so"]
            if len(files) > 15:
                big[str(folder.relative_to(ROOT))] = len(files)
    assert not big, f"folders over about 15 files; split them by concept: {big}"


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
        "runtime": {"runtime"},  # the HAL's driver, devices, streams, generator, settings, host access
        "memory": {"runtime", "memory"},  # the allocators, storages, IPC
        "device": {"runtime", "memory", "device"},  # c10's guard and hooks: registration over both
        "profiler": {"runtime", "profiler"},  # observers of device activity (trace, strict mode)
        "dispatch": {"runtime", "memory", "profiler", "dispatch"},
        "ops": {"runtime", "memory", "profiler", "dispatch", "ops"},
        "amp": {"runtime", "dispatch", "amp"},
        "distributed": {"runtime", "profiler", "distributed"},  # never op code: host access is runtime's
        "nki": {"runtime", "nki"},  # the NKI emulator's host kernels: ATen on CPU tensors (runtime: the export macro)
    }
    folders = {p.name for p in (ROOT / "csrc").iterdir() if p.is_dir()}
    assert folders - {"bindings"} == set(allowed), "every folder of csrc/ has its place in the layers"
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
    loose = [p.name for p in (ROOT / "csrc/distributed").iterdir() if p.is_file() and p.name != "README.md"]
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


# ---------------------------------------------------------------- Python imports
# Modules of torch_neuronx that are not Python files (the C++ extension): leaves of the graph.
EXTENSIONS = {"torch_neuronx._C"}


def python_modules() -> dict[str, pathlib.Path]:
    """Every module of torch_neuronx by dotted name (a package by its __init__.py)."""
    mods = {}
    for p in sources("torch_neuronx", ".py"):
        parts = list(p.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = p
    return mods


def imports(name: str, path: pathlib.Path, mods) -> list[tuple[str, int, bool]]:
    """(module of torch_neuronx imported, line, inside a function) for every
    import of a module, at any depth: `import a.b`, `from a import b` (module
    a.b when it is one, else a, whose __init__ defines b), relative forms. A
    package's __init__ counts as importing what it imports; importing a.b.c
    is not counted as importing the packages a and a.b."""
    tree = ast.parse(path.read_text(), str(path))
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    known = mods.keys() | EXTENSIONS
    out = []

    def visit(node, local):
        for child in ast.iter_child_nodes(node):
            inner = local or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                out.extend((a.name, child.lineno, inner) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package[: len(package) - child.level + 1] + ([child.module] if child.module else [])
                    module = ".".join(base)
                else:
                    module = child.module
                for a in child.names:
                    sub = f"{module}.{a.name}"
                    out.append((sub if sub in known else module, child.lineno, inner))
            visit(child, inner)

    visit(tree, False)
    return [(m, line, local) for m, line, local in out if m == "torch_neuronx" or m.startswith("torch_neuronx.")]


def import_graph():
    mods = python_modules()
    return mods, {name: imports(name, path, mods) for name, path in mods.items()}


def find_cycle(graph: dict[str, set]) -> list[str] | None:
    """A cycle of the directed graph as its nodes in order, or None."""
    state, stack = {}, []

    def dfs(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := dfs(nxt)):
                return cycle
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state and (cycle := dfs(node)):
            return cycle
    return None


def test_python_modules_import_no_cycle():
    # Function-local imports (lazy loading) count: they must not close a cycle either.
    mods, graph = import_graph()
    edges = {name: {m for m, _, _ in imps if m != name} for name, imps in graph.items()}
    cycle = find_cycle(edges)
    assert cycle is None, "import cycle: " + " -> ".join(
        str(mods[m].relative_to(ROOT)) if m in mods else m for m in cycle
    )


# The layers of torch_neuronx.nki (its __init__.py describes them), bottom up:
# a layer may import its own modules and those of the layers listed for it.
# Other torch_neuronx modules count as layers named after them (trainium, _C,
# observability); the package's __init__ is "api".
NKI_LAYERS = {
    "errors": set(),
    "finder": set(),  # standard library only: a .pth imports it at interpreter start
    "chip": {"errors", "trainium"},
    "trace": {"errors", "chip"},
    "isa": {"errors", "chip", "trace", "_C"},  # _C: the host kernels of csrc/nki
    "language": {"errors", "chip", "trace", "isa", "trainium"},
    "cost": {"errors", "chip", "trace", "trainium"},
    "executor": {"errors", "trace", "_C"},
    "jit": {"errors", "chip", "trace", "cost", "executor", "_C", "observability"},
    "torch_ops": {"errors", "jit"},
    "typing": {"trace"},
    "collectives": {"errors", "language"},
    "lnc": {"errors", "isa"},
    "api": {"errors", "finder", "chip", "isa", "language", "jit", "typing", "collectives", "lnc"},
}


def nki_layer(module: str) -> str:
    parts = module.split(".")
    if parts[:2] != ["torch_neuronx", "nki"]:
        return parts[1] if len(parts) > 1 else "torch_neuronx"
    return parts[2] if len(parts) > 2 else "api"


def test_nki_layers_import_only_below():
    mods, graph = import_graph()
    nki = [m for m in mods if m.startswith("torch_neuronx.nki")]
    unplaced = sorted(m for m in nki if nki_layer(m) not in NKI_LAYERS)
    assert not unplaced, f"every module of torch_neuronx/nki belongs to a layer of NKI_LAYERS: {unplaced}"
    bad = []
    for name in nki:
        layer = nki_layer(name)
        for m, line, local in graph[name]:
            where = f"{mods[name].relative_to(ROOT)}:{line}"
            to = nki_layer(m)
            if to != layer and to not in NKI_LAYERS[layer]:
                bad.append(f"{where} ({layer}) imports {m} ({to})")
            elif local and m.startswith("torch_neuronx."):
                bad.append(f"{where} imports {m} inside a function: import it at the top (a cycle needs a layer)")
    assert not bad, bad


def test_nki_imports_are_explicit_and_finder_is_stdlib_only():
    bad = []
    for p in sources("torch_neuronx/nki", ".py"):
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
                bad.append(f"{p.relative_to(ROOT)}:{node.lineno} imports *")
    finder = ROOT / "torch_neuronx/nki/finder.py"
    for node in ast.walk(ast.parse(finder.read_text())):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom):
            names = ["." if node.level else node.module]
        bad += [f"finder.py:{node.lineno} imports {n}" for n in names if n.split(".")[0] not in sys.stdlib_module_names]
    assert not bad, bad

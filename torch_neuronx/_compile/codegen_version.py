"""Keys Inductor's caches to this package's code generation. The FX graph
cache stores the generated wrapper's source and reuses it across processes
and upgrades; its key covers torch and Inductor's configuration, not the code
generators a device registers. A device's custom post-grad pass is part of
the key through its `uuid()`, so neuron registers one that changes nothing in
the graph and whose uuid hashes the sources of torch_neuronx/_compile: a
cached wrapper written by another version of them is never run."""

from pathlib import Path

import torch
from torch._inductor.custom_graph_pass import CustomGraphModulePass, get_hash_for_files

_SOURCES = tuple(sorted(str(p) for p in Path(__file__).parent.glob("*.py")))


class CodegenVersion(CustomGraphModulePass):
    def __call__(self, gm: torch.fx.GraphModule) -> None:
        """Leaves the graph as it is."""

    def uuid(self) -> bytes:
        return get_hash_for_files(_SOURCES)

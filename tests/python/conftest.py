"""Fixtures of the Python tier. The helpers that start processes (workers,
ranks, torchrun) are in helpers/, the programs they run in workers/."""

import pytest
import torch

import torch_neuronx

# The files whose tests take minutes, first: with `make test`'s two workers
# (pytest-xdist, --dist load) the long tests start while the short ones fill
# the other worker, instead of one long test finishing alone at the end.
# Each file's tests stay together, so its module fixtures are built once.
LONG_FIRST = (
    "hf/test_hf_diffusers.py",
    "hf/test_hf_scripts.py",
    "ops/test_fuzz_regressions.py",
    "project/test_soak.py",
    "ops/test_opinfo_sweep.py",
    "hf/test_hf_libraries.py",
    "device/test_exit.py",
    "compile/test_compile.py",
    "nki/test_kernels_models.py",
    "compile/test_compile_models.py",
)


def pytest_collection_modifyitems(items):
    def rank(item):
        path = item.nodeid.split("::")[0]
        return next((i for i, name in enumerate(LONG_FIRST) if path.endswith(name)), len(LONG_FIRST))

    items.sort(key=rank)  # stable: the order within a file and among the others is kept


@pytest.fixture(autouse=True)
def _clean_state():
    torch_neuronx.clear_op_tracking()
    yield
    torch.neuron.set_device(0)
    torch.neuron.synchronize(0)

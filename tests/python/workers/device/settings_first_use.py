"""Imports torch with the environment's settings (a bad one only warns), then
uses the device: prints the warnings of the import and the error of the
first use (or "used")."""

import warnings

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import torch

    import torch_neuronx  # noqa: F401

for w in caught:
    print(f"WARNING {w.category.__name__}: {w.message}")
try:
    torch.ones(1, device="neuron")
    print("used")
except RuntimeError as e:
    print(f"ERROR {e}")

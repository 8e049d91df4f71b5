"""`python -m torch_neuronx info`, run as the module's __main__ (test_device.py)."""

import runpy
import sys

sys.argv = ["torch_neuronx", "info"]
runpy.run_module("torch_neuronx", run_name="__main__")

"""Runs another worker (argv[1], a name in tests/python/workers/) on devices
that do not report host-addressable memory (TORCH_NEURONX_EMU_HOST_ADDRESSABLE=0,
set before torch loads), as a hardware driver may not: every host kernel and
collective must then go through staged copies (test_host_access_off.py)."""

import os
import runpy
import sys

from helpers.processes import worker_path

os.environ["TORCH_NEURONX_EMU_HOST_ADDRESSABLE"] = "0"
os.environ.setdefault("TORCH_NEURONX_FALLBACK_WARN", "0")
worker = worker_path(sys.argv[1])
sys.argv = [str(worker), *sys.argv[2:]]
runpy.run_path(str(worker), run_name="__main__")

import torch_neuronx  # noqa: E402  (loaded by the worker; the staging report below)

assert not torch_neuronx._C._host_addressable(0), "the emulator still reports host-addressable memory"
print("staged", torch_neuronx.host_staging_stats(), "fallback ops", len(torch_neuronx.get_fallback_ops()))

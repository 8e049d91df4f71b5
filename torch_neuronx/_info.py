"""The text of ``python -m torch_neuronx info``."""

import os

import torch

from . import _C

# Every setting the runtime reads (documented in the README's table).
KNOBS = (
    "TORCH_NEURONX_DRIVER",
    "NEURON_LOGICAL_NC_CONFIG",
    "NEURON_RT_VISIBLE_CORES",
    "NEURON_RT_NUM_CORES",
    "NEURON_LAUNCH_BLOCKING",
    "TORCH_NEURONX_EMU_HBM",
    "TORCH_NEURONX_EMU_CHIPS",
    "TORCH_NEURONX_EMU_QUEUE",
    "TORCH_NEURONX_EMU_HOST_ADDRESSABLE",
    "TORCH_NEURONX_FALLBACK_WARN",
    "TORCH_NEURONX_STRICT",
    "TORCH_NEURONX_REPORT",
    "TORCH_NEURONX_TRACE",
    "TORCH_NEURONX_TRACE_STEPS",
)


def _gib(n: int) -> str:
    return f"{n / 2**30:.2f} GiB"


def info_text() -> str:
    name, description, config = _C._driver_info()
    lines = [f"torch_neuronx {__import__('torch_neuronx').__version__} on torch {torch.__version__}",
             f"driver: {name} ({description})", ""]
    count = torch.neuron.device_count()
    lines.append(f"{'DEVICE':<10}{'NAME':<46}{'PHYS CORE':>10}{'IN USE':>12}{'CAPACITY':>12}")
    for i in range(count):
        props = torch.neuron.get_device_properties(i)
        free, total = torch.neuron.mem_get_info(i)
        lines.append(f"{'neuron:' + str(i):<10}{props.name:<46}{props.physical_core:>10}"
                     f"{_gib(total - free):>12}{_gib(total):>12}")
    if count == 0:
        lines.append("(no NeuronCores visible)")
    elif _C._host_addressable(0):
        lines += ["", "host access: device memory is host-addressable (host kernels and collectives run on it in place)"]
    else:
        lines += ["", "host access: device memory is not host-addressable (host kernels and collectives stage "
                      "copies; see torch_neuronx.host_staging_stats())"]
    lines += ["", "settings in effect (driver):"]
    lines += [f"  {line}" for line in config.splitlines()]
    lines += ["", "environment:"]
    lines += [f"  {k}={os.environ[k]}" if k in os.environ else f"  {k} (unset)" for k in KNOBS]
    return "\n".join(lines) + "\n"

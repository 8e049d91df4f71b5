"""The text of ``python -m torch_neuronx info``."""

import torch

from . import _C, settings


def _gib(n: int) -> str:
    return f"{n / 2**30:.2f} GiB"


def info_text() -> str:
    name, description, config = _C._driver_info()
    lines = [
        f"torch_neuronx {__import__('torch_neuronx').__version__} on torch {torch.__version__}",
        f"driver: {name} ({description})",
        "",
    ]
    count = torch.neuron.device_count()
    lines.append(f"{'DEVICE':<10}{'NAME':<46}{'PHYS CORE':>10}{'IN USE':>12}{'CAPACITY':>12}")
    for i in range(count):
        props = torch.neuron.get_device_properties(i)
        free, total = torch.neuron.mem_get_info(i)
        lines.append(
            f"{'neuron:' + str(i):<10}{props.name:<46}{props.physical_core:>10}"
            f"{_gib(total - free):>12}{_gib(total):>12}"
        )
    if count == 0:
        lines.append("(no NeuronCores visible)")
    elif _C._host_addressable(0):
        lines += [
            "",
            "host access: device memory is host-addressable (host kernels and collectives run on it in place)",
        ]
    else:
        lines += [
            "",
            "host access: device memory is not host-addressable (host kernels and collectives stage "
            "copies; see torch_neuronx.host_staging_stats())",
        ]
    lines += ["", "settings in effect (driver):"]
    lines += [f"  {line}" for line in config.splitlines()]
    lines += ["", "environment (every variable torch_neuronx reads: docs/settings.md):"]
    lines += [f"  {line}" for line in settings.in_effect()]
    return "\n".join(lines) + "\n"

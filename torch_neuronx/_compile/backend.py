"""The named compile backend `neuron` (`torch.compile(model, backend="neuron")`,
found by dynamo through the `torch_dynamo_backends` entry point): Inductor,
with the `mode=` and `options=` that torch.compile forwards to a named
backend. Modes are Inductor's; "reduce-overhead" asks for CUDA graphs, which
NeuronCores do not have here, so it compiles like the default mode."""

import torch


def neuron(gm, example_inputs, mode=None, options=None):
    from torch._inductor import list_mode_options
    from torch._inductor.compile_fx import compile_fx

    from . import register

    register()
    patches = dict(list_mode_options(mode)) if mode else {}
    patches.pop("triton.cudagraphs", None)  # no CUDA graphs on neuron
    patches.update(options or {})
    return compile_fx(gm, example_inputs, config_patches=patches)


del torch

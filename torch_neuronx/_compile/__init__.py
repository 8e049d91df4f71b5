"""torch.compile on neuron: Inductor's C++ code generation for a device whose
memory the host addresses (the emulator's), registered for device `neuron`.

Registration is lazy (importing torch._dynamo costs seconds): Inductor asks
the device module for `Scheduling`, `PythonWrapperCodegen` and
`CppWrapperCodegen` when it first initialises its backends, and
`torch.neuron.__getattr__` answers through `codegen_class`, which registers the
dynamo device interface and the device op overrides at the same time."""

_registered = False


def register() -> None:
    """Registers neuron with dynamo and Inductor (idempotent)."""
    global _registered
    if _registered:
        return
    import torch

    # Three GPU-only scheduler rewrites skip the CPU by device type ("not
    # validated for CPU codegen" in Inductor); neuron uses the CPU codegen, so
    # they are turned off. This process has no GPU for them to help.
    import torch._inductor.config as inductor_config
    from torch._dynamo.device_interface import register_interface_for_device
    from torch._inductor.codegen.common import register_backend_for_device, register_device_op_overrides

    from .codegen_version import CodegenVersion
    from .device_interface import NeuronInterface
    from .inductor_backend import NeuronCppWrapper, NeuronDeviceOpOverrides, NeuronScheduling, NeuronWrapper

    inductor_config.loop_reindexing_after_fusion = False
    inductor_config.loop_index_inversion_in_fusion = False
    inductor_config.loop_ordering_after_fusion = False
    # Inductor maps every device type it does not know to `cuda_backend` when
    # it asks which code generator a kernel has ("triton" by default), and
    # then treats bfloat16 loads the Triton way. Neuron's is C++. Only safe
    # where no CUDA device shares the process, as in torch's CPU build.
    if not torch.cuda.is_available():
        inductor_config.cuda_backend = "cpp"

    from . import rng_functionalization

    rng_functionalization.register()
    register_interface_for_device("neuron", NeuronInterface)
    register_device_op_overrides("neuron", NeuronDeviceOpOverrides())
    register_backend_for_device(
        "neuron", NeuronScheduling, NeuronWrapper, NeuronCppWrapper, device_custom_pass=CodegenVersion()
    )
    _registered = True


_CODEGEN = {
    "Scheduling": "NeuronScheduling",
    "PythonWrapperCodegen": "NeuronWrapper",
    "CppWrapperCodegen": "NeuronCppWrapper",
}


def codegen_class(name: str):
    """The class Inductor asks the device module for, by its generic name."""
    register()
    from . import inductor_backend

    return getattr(inductor_backend, _CODEGEN[name])

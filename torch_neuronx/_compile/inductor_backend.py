"""Inductor's backend for neuron: the CPU backend's C++ scheduling (vectorized,
OpenMP-parallel loops over raw pointers), which is right for a device whose
memory the host addresses, and a Python wrapper that calls those kernels the
way the CPU wrapper does. Buffers are allocated on neuron by the wrapper
(`empty_strided(..., device='neuron')`), so outputs live in neuron memory.

Buffers come from `_C._empty_strided_neuron(size, stride, dtype, index)`, the
counterpart of the CPU wrapper's `empty_strided_cpu` (no argument parser, no
dispatcher), on the device Inductor assigned, whatever the current device.

Ordering: the wrapper first calls `_C._before_host_kernels(index)` for each
neuron device of the graph (waits for the queued eager work that produced the
inputs; refuses a device the host cannot address), then runs the kernels on
the calling thread; in the emulator's default inline queue mode that wait is
a stream query."""

import torch
from torch._inductor.codegen.common import DeviceOpOverrides
from torch._inductor.codegen.cpp import CppScheduling
from torch._inductor.codegen.cpp_wrapper_cpu import CppWrapperCpu
from torch._inductor.codegen.wrapper import PythonWrapperCodegen
from torch._inductor.virtualized import V

from .metrics import count_graph


class NeuronScheduling(CppScheduling):
    """CppScheduling, for neuron buffers."""


class NeuronWrapper(PythonWrapperCodegen):
    @staticmethod
    def create(is_subgraph, subgraph_name, parent_wrapper, partition_signatures=None):
        if is_subgraph:
            return PythonWrapperCodegen.create(is_subgraph, subgraph_name, parent_wrapper, partition_signatures)
        return NeuronWrapper()

    def define_kernel(self, kernel_name, kernel_body, metadata=None, gpu=True, cpp_definition=None):
        self._neuron_kernels = getattr(self, "_neuron_kernels", 0) + 1
        super().define_kernel(kernel_name, kernel_body, metadata, gpu, cpp_definition)

    def generate(self, is_inference):
        result = super().generate(is_inference)
        count_graph(getattr(self, "_neuron_kernels", 0))
        return result

    def write_header(self) -> None:
        super().write_header()
        self.imports.writeline("import torch_neuronx._C")
        self.header.writeline("empty_strided_neuron = torch_neuronx._C._empty_strided_neuron")
        self.header.writeline("before_host_kernels = torch_neuronx._C._before_host_kernels")

    def write_args(self, input_names) -> None:
        super().write_args(input_names)  # inside call(): the arguments are unpacked, then
        for index in sorted(V.graph.device_idxs) or ["torch.neuron.current_device()"]:
            self.prefix.writeline(f"before_host_kernels({index})")

    def make_allocation(self, name, device, dtype, shape, stride, allocation_shape=None, is_pinned=False):
        if device.type != "neuron" or torch._inductor.config.test_configs.track_memory_lifecycle:
            return super().make_allocation(name, device, dtype, shape, stride, allocation_shape, is_pinned)
        index = "torch.neuron.current_device()" if device.index is None else device.index
        stride_tuple = self.codegen_python_shape_tuple(stride)
        shape_tuple = self.codegen_python_shape_tuple(shape)
        allocation_tuple = self.codegen_python_shape_tuple(shape if allocation_shape is None else allocation_shape)
        out = f"{name} = empty_strided_neuron({allocation_tuple}, {stride_tuple}, {dtype}, {index})"
        if shape_tuple != allocation_tuple:
            out += f".as_strided({shape_tuple}, {stride_tuple})"
        return out

    def _generate_kernel_call_helper(self, kernel_name, call_args, *, device=None, triton=True, **kwargs):
        device = device or V.graph.get_current_device_or_throw()
        if not triton and device.type == "neuron":  # a C++ kernel: a plain call, as on the CPU
            self.writeline(self.wrap_kernel_call(kernel_name, call_args))
            return
        super()._generate_kernel_call_helper(kernel_name, call_args, device=device, triton=triton, **kwargs)


class NeuronCppWrapper(CppWrapperCpu):
    """The CPU C++ wrapper (cpp_wrapper=True / AOTInductor)."""

    @staticmethod
    def create(is_subgraph, subgraph_name, parent_wrapper, partition_signatures=None):
        return NeuronCppWrapper()


class NeuronDeviceOpOverrides(DeviceOpOverrides):
    def import_get_raw_stream_as(self, name: str) -> str:
        return f"def {name}(_):\n    return 0\n"

    def set_device(self, device_idx: int) -> str:
        return f"torch.neuron.set_device({device_idx})"

    def synchronize(self) -> str:
        return "torch.neuron.synchronize()"

    def device_guard(self, device_idx: int) -> str:
        return f"torch.neuron.device({device_idx})"

    def cpp_kernel_type(self) -> str:
        return "void*"

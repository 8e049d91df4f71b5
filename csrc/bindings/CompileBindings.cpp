// The per-call paths of Inductor's generated Python wrapper for neuron
// (torch_neuronx/_compile/inductor_backend.py), as plain CPython functions:
// a compiled decode step calls them tens of times per token, where
// pybind11's and the dispatcher's argument handling would cost as much as the
// work (the CPU wrapper's torch._C._dynamo.guards._empty_strided_cpu is the
// model).
//
//   _empty_strided_neuron(size, stride, dtype, device_index) -> Tensor
//     An uninitialized neuron buffer from the caching allocator on that
//     device's current stream. size and stride are tuples of ints.
//   _before_host_kernels(device_index) -> None
//     Raises unless the host may address the device's memory; otherwise waits
//     for the work queued on its current stream, releasing the GIL only when
//     there is work to wait for.
#include "bindings/CompileBindings.h"

#include <ATen/EmptyTensor.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/SmallVector.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>

#include "memory/NeuronCachingAllocator.h"
#include "runtime/NeuronFunctions.h"
#include "runtime/NeuronHostAccess.h"

namespace torch_neuronx {
namespace {

using Dims = c10::SmallVector<int64_t, 8>;

void unpack_dims(PyObject* obj, const char* what, Dims& out) {
  TORCH_CHECK_TYPE(PyTuple_CheckExact(obj), "_empty_strided_neuron: ", what, " must be a tuple of ints, got ",
                   Py_TYPE(obj)->tp_name);
  const Py_ssize_t n = PyTuple_GET_SIZE(obj);
  out.reserve(n);
  for (Py_ssize_t i = 0; i < n; ++i) {
    const Py_ssize_t v = PyLong_AsSsize_t(PyTuple_GET_ITEM(obj, i));
    if (v == -1 && PyErr_Occurred()) throw python_error();
    TORCH_CHECK_VALUE(v >= 0, "_empty_strided_neuron: ", what, " must not be negative, got ", v);
    out.push_back(v);
  }
}

c10::DeviceIndex unpack_device(PyObject* obj, const char* fn) {
  const long v = PyLong_AsLong(obj);
  if (v == -1 && PyErr_Occurred()) throw python_error();
  TORCH_CHECK_VALUE(v >= 0 && v < device_count(), fn, ": neuron:", v, " does not exist (", device_count(),
                    " neuron devices)");
  return static_cast<c10::DeviceIndex>(v);
}

PyObject* empty_strided_neuron(PyObject* /*self*/, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  TORCH_CHECK_TYPE(nargs == 4, "_empty_strided_neuron(size, stride, dtype, device_index) takes 4 arguments, got ",
                   nargs);
  Dims sizes, strides;
  unpack_dims(args[0], "size", sizes);
  unpack_dims(args[1], "stride", strides);
  TORCH_CHECK_TYPE(THPDtype_Check(args[2]), "_empty_strided_neuron: dtype must be a torch.dtype, got ",
                   Py_TYPE(args[2])->tp_name);
  const at::ScalarType dtype = reinterpret_cast<THPDtype*>(args[2])->scalar_type;
  const c10::DeviceGuard guard(
      c10::Device(c10::DeviceType::PrivateUse1, unpack_device(args[3], "_empty_strided_neuron")));
  return THPVariable_Wrap(at::detail::empty_strided_generic(sizes, strides, &caching_allocator(),
                                                            c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), dtype));
  END_HANDLE_TH_ERRORS
}

PyObject* before_host_kernels(PyObject* /*self*/, PyObject* device_arg) {
  HANDLE_TH_ERRORS
  const c10::DeviceIndex device = unpack_device(device_arg, "_before_host_kernels");
  TORCH_CHECK(host_addressable(device), "neuron:", static_cast<int>(device),
              ": this driver does not expose device memory to the host, so Inductor's host kernels cannot run on "
              "it; compile with torch.compile(..., backend=\"neuron\"), which stages such graphs");
  if (producers_pending(device)) {
    pybind11::gil_scoped_release no_gil;
    wait_for_producers(device);
  }
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
}

PyMethodDef kMethods[] = {
    {"_empty_strided_neuron", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&empty_strided_neuron)),
     METH_FASTCALL, "A neuron buffer for Inductor's wrapper: (size, stride, dtype, device_index)."},
    {"_before_host_kernels", &before_host_kernels, METH_O,
     "Called by Inductor's wrapper before its host kernels run on a neuron device's memory."},
};

}  // namespace

void bind_compile(pybind11::module& m) {
  for (PyMethodDef& def : kMethods) {
    PyObject* fn = PyCFunction_New(&def, nullptr);
    if (fn == nullptr) throw pybind11::error_already_set();
    m.add_object(def.ml_name, pybind11::reinterpret_steal<pybind11::object>(fn));
  }
}

}  // namespace torch_neuronx

// torch_neuronx._C: the only code that includes Python.h. Thin wrappers over
// the core; no logic beyond argument conversion.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/Generator.h>
#include <torch/csrc/utils/pybind.h>

#include <cstring>
#include <string>

#include "bindings/CompileBindings.h"
#include "bindings/MemoryHistoryBindings.h"
#include "bindings/TraceBindings.h"
#include "dispatch/NeuronHostDispatch.h"
#include "dispatch/NeuronOutputScope.h"
#include "distributed/c10d/ProcessGroupNeuron.h"
#include "distributed/onehost/DirectCollectives.h"
#include "memory/NeuronCachingAllocator.h"
#include "memory/NeuronIpc.h"
#include "nki/NkiScan.h"
#include "profiler/NeuronOpTracking.h"
#include "runtime/NeuronFunctions.h"
#include "runtime/NeuronGenerator.h"
#include "runtime/NeuronHal.h"
#include "runtime/NeuronHostAccess.h"
#include "runtime/NeuronSettings.h"
#include "runtime/NeuronStream.h"

namespace py = pybind11;
using namespace torch_neuronx;

PYBIND11_MODULE(_C, m) {
  m.doc() = "TorchNeuron core bindings";
  bind_trace(m);
  bind_memory_history(m);
  bind_compile(m);

  // Runtime state.
  m.def("_lazy_init", &lazy_init);
  m.def("_is_initialized", &is_initialized);
  m.def("_is_in_bad_fork", &in_bad_fork);
  m.def("_driver_info", [] {
    const nhal_driver& d = hal();
    const char* config = d.describe_config ? d.describe_config() : "";
    return py::make_tuple(d.name, d.description, config);
  });
  m.def("_driver_names", [] { return std::string(nhal_driver_names()); });

  // Devices.
  m.def("_device_count", [] { return static_cast<int>(device_count_ensure_non_zero_or_zero()); });
  m.def("_device_count_checked", [] { return static_cast<int>(device_count()); });
  m.def("_current_device", [] { return static_cast<int>(current_device()); });
  m.def("_set_device", [](int d) { set_device(static_cast<c10::DeviceIndex>(d)); });
  m.def("_exchange_device", [](int d) { return static_cast<int>(exchange_device(static_cast<c10::DeviceIndex>(d))); });
  m.def("_get_device_properties", [](int d) {
    nhal_device_properties p = device_properties(static_cast<c10::DeviceIndex>(d));
    return py::make_tuple(std::string(p.name), p.total_memory, p.cores_per_device, p.physical_core,
                          host_addressable(static_cast<c10::DeviceIndex>(d)));
  });
  m.def("_synchronize", [](int d) {
    py::gil_scoped_release no_gil;
    NEURON_HAL_CHECK(hal().device.synchronize(resolve_device(static_cast<c10::DeviceIndex>(d))));
    ProcessGroupNeuron::release_all_finished();  // what finished collectives held is free after synchronize
  });
  m.def("_stream_priority", [](int64_t id, int device) {
    return stream_priority(c10::Stream(
        c10::Stream::UNSAFE, c10::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(device)), id));
  });

  // Memory.
  m.def("_empty_cache", [] { caching_allocator().emptyCache(); });
  m.def("_allocator_owns", [](uintptr_t ptr) { return caching_allocator().owns(reinterpret_cast<void*>(ptr)); });
  m.def("_cpu_allocations", &cpu_allocation_count);
  // Sharing with other processes (torch_neuronx/_multiprocessing.py): the handle
  // of a tensor's storage as (fd, allocation bytes, offset), and a uint8 tensor
  // over a received one.
  m.def("_share_storage", [](const at::Tensor& t) {
    IpcHandle h;
    {
      py::gil_scoped_release no_gil;
      h = export_storage(t.storage());
    }
    return py::bytes(reinterpret_cast<const char*>(&h), sizeof(h));
  });
  m.def("_open_shared_storage", [](int device, const py::bytes& handle, uint64_t nbytes) {
    const auto d = static_cast<c10::DeviceIndex>(device);
    const std::string raw = handle;
    TORCH_CHECK(raw.size() == sizeof(IpcHandle), "a shared neuron storage's handle has ", raw.size(), " bytes, not ",
                sizeof(IpcHandle), " (was it sent by another build of torch_neuronx?)");
    IpcHandle h{};
    std::memcpy(&h, raw.data(), sizeof(h));
    c10::Storage s = open_storage(d, h, nbytes);
    at::Tensor bytes = at::empty({0}, at::TensorOptions().dtype(at::kByte).device(c10::DeviceType::PrivateUse1, d));
    return bytes.set_(std::move(s), 0, {static_cast<int64_t>(nbytes)}, {1});
  });
  m.def("_set_settings_error", [](std::string message) { set_settings_error(std::move(message)); });
  m.def("_mem_get_info", [](int d) { return caching_allocator().getMemoryInfo(static_cast<c10::DeviceIndex>(d)); });

  // Random numbers.
  m.def("_default_generator", [](int d) {
    return py::reinterpret_steal<py::object>(
        THPGenerator_initDefaultGenerator(default_generator(static_cast<c10::DeviceIndex>(d))));
  });

  // Op tracking.
  m.def("_fallback_ops", &fallback_ops);
  m.def("_executed_ops", &executed_ops);
  m.def("_clear_op_tracking", &clear_op_tracking);
  m.def("_set_fallback_warnings", &set_fallback_warnings);
  m.def("_fallback_warnings_enabled", &fallback_warnings_enabled);
  m.def("_set_zero_copy", &set_zero_copy);
  m.def("_zero_copy_enabled", &zero_copy_enabled);
  m.def("_register_host_kernels", &register_host_kernels);
  m.def("_nki_tensor_tensor_scan", &nki::tensor_tensor_scan);

  // Host access to device memory.
  m.def("_host_addressable", [](int d) { return host_addressable(static_cast<c10::DeviceIndex>(d)); });
  m.def(
      "_wait_for_producers", [](int d) { wait_for_producers(resolve_device(static_cast<c10::DeviceIndex>(d))); },
      py::call_guard<py::gil_scoped_release>());
  // A CPU tensor over the bytes of a neuron tensor (no copy; keeps its storage alive). The NKI
  // emulator runs kernels on these; it waits for producers first (_wait_for_producers).
  m.def("_host_view", [](const at::Tensor& t) { return host_view(t); });
  m.def("_host_staging_stats", [] {
    StagingStats s = staging_stats();
    return py::dict(py::arg("to_host_copies") = s.to_host_copies, py::arg("to_host_bytes") = s.to_host_bytes,
                    py::arg("to_device_copies") = s.to_device_copies, py::arg("to_device_bytes") = s.to_device_bytes);
  });
  m.def("_reset_host_staging_stats", &reset_staging_stats);

  m.def(
      "_create_process_group",
      [](const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, double timeout_s,
         const std::string& group_name, std::vector<int> host_of_rank, const py::object& world,
         const py::object& leaders) -> c10::intrusive_ptr<c10d::Backend> {
        auto timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
        auto backend = [](const py::object& o) {
          py::gil_scoped_acquire gil;
          return o.is_none() ? c10::intrusive_ptr<c10d::Backend>() : o.cast<c10::intrusive_ptr<c10d::Backend>>();
        };
        HostSpan span{std::move(host_of_rank), backend(world), backend(leaders)};
        return c10::make_intrusive<ProcessGroupNeuron>(store, rank, size, timeout, group_name, std::move(span));
      },
      py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout_s"), py::arg("group_name"),
      py::arg("host_of_rank") = std::vector<int>{}, py::arg("world") = py::none(), py::arg("leaders") = py::none(),
      py::call_guard<py::gil_scoped_release>());
  // The Python face of the backend: what torch.distributed asks of a backend
  // that supports splitting (split_group copies `options`; new_group calls
  // perform_nocolor_split on ranks outside the new group).
  py::class_<NeuronBackendOptions, c10d::Backend::Options, c10::intrusive_ptr<NeuronBackendOptions>>(
      m, "NeuronBackendOptions")
      .def("__deepcopy__",
           [](const NeuronBackendOptions& self, py::dict) { return c10::make_intrusive<NeuronBackendOptions>(self); });
  py::class_<ProcessGroupNeuron, c10d::Backend, c10::intrusive_ptr<ProcessGroupNeuron>>(m, "ProcessGroupNeuron")
      .def_property_readonly(
          "options",
          [](ProcessGroupNeuron& self) {
            return c10::static_intrusive_pointer_cast<NeuronBackendOptions>(self.getBackendOptions());
          })
      // Only the new group's members rendezvous: the others have nothing to do.
      .def("perform_nocolor_split", [](ProcessGroupNeuron&, const c10::Device&) {});
  // Counters of a group's neuron backend (what dist.ProcessGroup._get_backend gives).
  using BackendPtr = c10::intrusive_ptr<c10d::Backend>;
  static auto as_neuron = [](const BackendPtr& backend) -> ProcessGroupNeuron& {
    auto* pg = dynamic_cast<ProcessGroupNeuron*>(backend.get());
    TORCH_CHECK(pg != nullptr, "not a neuron process group backend: ", backend->getBackendName());
    return *pg;
  };
  m.def(
      "_drain_process_groups",
      [](double limit_s) {
        ProcessGroupNeuron::drain_all(std::chrono::milliseconds(static_cast<int64_t>(limit_s * 1000)));
      },
      py::call_guard<py::gil_scoped_release>());
  m.def("_process_group_host_count", [](const BackendPtr& b) { return as_neuron(b).host_count(); });
  m.def("_process_group_tcp_bytes", [](const BackendPtr& b) { return as_neuron(b).tcp_bytes(); });
  m.def("_process_group_peer_mappings", [](const BackendPtr& b) { return as_neuron(b).peer_mappings(); });
  m.def("_process_group_shm_bytes", [](const BackendPtr& b) { return as_neuron(b).shm_bytes(); });
  // One meeting of the group's ranks (a barrier: its signature exchange) on
  // the caller's thread, through the backend's own call path but not c10d's
  // Python layer: the floor benchmarks/collectives.py sets beside a collective.
  m.def("_set_direct_collectives", &dist::set_direct_collectives);
  m.def(
      "_process_group_meet",
      [](const BackendPtr& b, int times) {
        c10d::BarrierOptions opts;
        opts.asyncOp = false;
        for (int i = 0; i < times; ++i) as_neuron(b).barrier(opts)->wait();
      },
      py::arg("backend"), py::arg("times") = 1, py::call_guard<py::gil_scoped_release>());
  m.def("_process_group_run_collective",
        [](const BackendPtr& b, const std::string& name, std::vector<at::Tensor> inputs,
           std::vector<at::Tensor> outputs, int root) { return as_neuron(b).run_named(name, inputs, outputs, root); });
}

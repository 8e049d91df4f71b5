// Python side of profiler/NeuronTrace.h: subscriptions (torch_neuronx's run
// record), activities recorded from Python (NKI kernels, compiled graphs),
// the estimator the Kineto session calls, and strict mode's hook.
#include "bindings/TraceBindings.h"

#include <pybind11/stl.h>

#include "profiler/NeuronTrace.h"
#include "runtime/NeuronStream.h"

namespace py = pybind11;

namespace torch_neuronx {
namespace {

const char* const kKindNames[] = {"op", "copy", "collective", "kernel", "graph"};

trace::Kind kind_of(const std::string& name) {
  for (int i = 0; i < 5; ++i) {
    if (name == kKindNames[i]) return static_cast<trace::Kind>(i);
  }
  throw py::value_error("unknown activity kind '" + name + "': one of op, copy, collective, kernel, graph");
}

py::dict to_dict(const trace::Activity& a) {
  py::dict d;
  d["kind"] = kKindNames[static_cast<int>(a.kind)];
  d["name"] = a.name;
  d["detail"] = a.detail;
  d["start_ns"] = a.start_ns;
  d["end_ns"] = a.end_ns;
  d["device"] = a.device;
  d["stream"] = a.stream;
  d["depth"] = a.depth;
  d["bytes"] = a.bytes;
  d["world"] = a.world;
  d["dtype"] = a.dtype == c10::ScalarType::Undefined ? std::string() : std::string(c10::toString(a.dtype));
  d["in_shapes"] = a.in_shapes;
  d["out_shapes"] = a.out_shapes;
  d["estimated_us"] = a.estimated_us;
  d["engine"] = a.engine;
  return d;
}

py::object& estimator_fn() {
  static auto* fn = new py::object();  // leaked: outlives the interpreter's teardown
  return *fn;
}
py::object& strict_fn() {
  static auto* fn = new py::object();
  return *fn;
}

// The estimator returns one (microseconds, engine) per activity it was given.
void call_estimator(std::vector<trace::Activity>& activities) {
  if (!Py_IsInitialized()) return;
  py::gil_scoped_acquire gil;
  if (!estimator_fn() || estimator_fn().is_none()) return;
  std::vector<trace::Activity*> todo;
  py::list items;
  for (trace::Activity& a : activities) {
    if (a.depth != 0 || a.estimated_us >= 0) continue;
    todo.push_back(&a);
    items.append(to_dict(a));
  }
  try {
    py::list out = estimator_fn()(items);
    for (size_t i = 0; i < todo.size() && i < out.size(); ++i) {
      auto t = out[i].cast<py::tuple>();
      todo[i]->estimated_us = t[0].cast<double>();
      todo[i]->engine = t[1].cast<std::string>();
    }
  } catch (py::error_already_set& e) {
    e.discard_as_unraisable("torch_neuronx: estimating the neuron trace");
  }
}

void call_strict(const char* kind, const std::string& op, const std::string& detail) {
  py::gil_scoped_acquire gil;
  if (!strict_fn() || strict_fn().is_none()) return;
  strict_fn()(kind, op, detail);  // a StrictModeError propagates to the op's caller
}

class PyScope {
 public:
  PyScope(const std::string& kind, const std::string& name, const std::string& detail, int64_t bytes,
          double estimated_us, const std::string& engine)
      : kind_(kind_of(kind)),
        name_(name),
        detail_(detail),
        bytes_(bytes),
        estimated_us_(estimated_us),
        engine_(engine) {}
  void enter() {
    scope_ = std::make_unique<trace::ActivityScope>(kind_, name_, detail_.c_str());
    scope_->set_bytes(bytes_);
    if (estimated_us_ >= 0) scope_->set_estimate(estimated_us_, engine_);
  }
  void exit() { scope_.reset(); }

 private:
  trace::Kind kind_;
  std::string name_, detail_;
  int64_t bytes_;
  double estimated_us_;
  std::string engine_;
  std::unique_ptr<trace::ActivityScope> scope_;
};

}  // namespace

void bind_trace(py::module& m) {
  py::class_<trace::Buffer, std::shared_ptr<trace::Buffer>>(m, "_TraceBuffer");
  m.def("_trace_active", &trace::active);
  m.def("_trace_subscribe", &trace::subscribe);
  m.def("_trace_take", [](const std::shared_ptr<trace::Buffer>& buf) {
    std::vector<trace::Activity> acts = trace::take(buf);
    py::list out;
    for (const trace::Activity& a : acts) out.append(to_dict(a));
    return out;
  });
  // An activity that already happened (start/end in ns from _trace_now_ns),
  // on the current device and stream, at the current nesting depth.
  m.def("_trace_now_ns", &trace::now_ns);
  m.def("_trace_record",
        [](const std::string& kind, const std::string& name, int64_t start_ns, int64_t end_ns, int device,
           const std::string& detail, int64_t bytes, double estimated_us, const std::string& engine) {
          if (!trace::active()) return;
          trace::Activity a;
          a.kind = kind_of(kind);
          a.name = name;
          a.detail = detail;
          a.start_ns = start_ns;
          a.end_ns = end_ns;
          a.device = device;
          a.stream = current_stream(static_cast<c10::DeviceIndex>(device)).id();
          a.correlation = trace::current_correlation();
          a.host_tid = trace::this_host_tid();
          a.bytes = bytes;
          a.estimated_us = estimated_us;
          a.engine = engine;
          trace::record(std::move(a));
        });
  // A span whose activities nest under it (a compiled graph's ops).
  py::class_<PyScope>(m, "_TraceScope")
      .def(py::init<std::string, std::string, std::string, int64_t, double, std::string>())
      .def(
          "__enter__",
          [](PyScope& s) {
            s.enter();
            return &s;
          },
          py::return_value_policy::reference)
      .def("__exit__", [](PyScope& s, py::args) {
        s.exit();
        return false;
      });
  m.def("_set_trace_estimator", [](py::object fn) {
    estimator_fn() = std::move(fn);
    trace::set_estimator(estimator_fn().is_none() ? nullptr : &call_estimator);
  });
  m.def("_set_strict_hook", [](py::object fn) {
    strict_fn() = std::move(fn);
    strict::set_hook(strict_fn().is_none() ? nullptr : &call_strict);
  });
}

}  // namespace torch_neuronx

// The neuron device in torch.profiler: a libkineto::IActivityProfiler that
// PyTorch registers with Kineto (REGISTER_PRIVATEUSE1_PROFILER), so that
// profile(activities=[..., ProfilerActivity.PrivateUse1]) gets device tracks.
//
// Trace layout (Chrome/Perfetto JSON as export_chrome_trace writes it):
//   pid = neuron device index, one tid per stream ("stream <id>"): every op
//     with its execution path, copies with bytes and direction, collectives
//     with bytes and transport, NKI kernels and compiled graphs; each linked
//     by a flow to the CPU op that issued it (Kineto's correlation id).
//   tid = kEstimateTrack on the same pid, "estimated Trainium2": the depth-0
//     activities with the cost model's time (torch_neuronx/estimation/ops.py),
//     each starting when the host issued it or when the previous one ends.
// Compiled only here with USE_KINETO and Kineto's headers (decisions: keep
// them off the rest of the build).
#include <torch/csrc/profiler/standalone/privateuse1_profiler.h>

#include <GenericTraceActivity.h>
#include <IActivityProfiler.h>
#include <libkineto.h>
#include <output_base.h>

#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>

#include "profiler/NeuronTrace.h"

namespace torch_neuronx::trace {
namespace {

constexpr int64_t kEstimateTrack = 1 << 20;  // above any stream id the emulator hands out
// Estimated slices are device annotations (as record_function ranges on a
// GPU): torch.profiler's device time totals leave them out; its tables list
// them under "<name> (estimated)".
constexpr auto kEstimateType = libkineto::ActivityType::GPU_USER_ANNOTATION;

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::kOp:
      return "op";
    case Kind::kCopy:
      return "copy";
    case Kind::kCollective:
      return "collective";
    case Kind::kKernel:
      return "nki kernel";
    case Kind::kGraph:
      return "compiled graph";
  }
  return "op";
}

libkineto::ActivityType activity_type(Kind k) {
  switch (k) {
    case Kind::kCopy:
      return libkineto::ActivityType::GPU_MEMCPY;
    case Kind::kCollective:
      return libkineto::ActivityType::COLLECTIVE_COMM;
    default:
      return libkineto::ActivityType::CONCURRENT_KERNEL;
  }
}

std::string shapes_json(const std::vector<std::vector<int64_t>>& shapes) {
  std::string s = "[";
  for (size_t i = 0; i < shapes.size(); ++i) {
    s += i ? ", [" : "[";
    for (size_t j = 0; j < shapes[i].size(); ++j) s += (j ? ", " : "") + std::to_string(shapes[i][j]);
    s += "]";
  }
  return s + "]";
}

class Session : public libkineto::IActivityProfilerSession {
 public:
  void start() override {
    buf_ = subscribe();
    status_ = libkineto::TraceStatus::RECORDING;
  }

  void stop() override {
    if (buf_) {
      activities_ = take(buf_);
      buf_.reset();
      estimate(activities_);
    }
    status_ = libkineto::TraceStatus::PROCESSING;
  }

  std::vector<std::string> errors() override { return {}; }

  void processTrace(libkineto::ActivityLogger& logger) override { processTrace(logger, nullptr, 0, 0); }

  void processTrace(libkineto::ActivityLogger& logger, libkineto::getLinkedActivityCallback linked, int64_t,
                    int64_t) override {
    if (activities_.empty()) return;
    int64_t first = activities_.front().start_ns, last = activities_.front().end_ns;
    for (const Activity& a : activities_) {
      first = std::min(first, a.start_ns);
      last = std::max(last, a.end_ns);
    }
    buffer_->span = libkineto::TraceSpan(first, last, "neuron");
    std::map<int32_t, int64_t> estimate_end;  // per device
    std::vector<const Activity*> order;
    for (const Activity& a : activities_) order.push_back(&a);
    std::stable_sort(order.begin(), order.end(),
                     [](const Activity* x, const Activity* y) { return x->start_ns < y->start_ns; });
    for (const Activity* a : order) {
      auto& act = add(libkineto::GenericTraceActivity(buffer_->span, activity_type(a->kind), a->name), *a);
      act.startTime = a->start_ns;
      act.endTime = a->end_ns;
      act.resource = a->stream;
      streams_.insert({a->device, a->stream});
      act.addMetadataQuoted("kind", kind_name(a->kind));
      if (!a->detail.empty()) act.addMetadataQuoted(a->kind == Kind::kOp ? "path" : "detail", a->detail);
      if (a->bytes) act.addMetadata("bytes", a->bytes);
      if (a->world) act.addMetadata("world", a->world);
      if (!a->in_shapes.empty()) act.addMetadataQuoted("input shapes", shapes_json(a->in_shapes));
      if (a->estimated_us >= 0) act.addMetadata("estimated Trainium2 us", a->estimated_us);
      // One flow per CPU op: from its launch event to its first device slice
      // (a native kernel's parts and a graph's ops share the op's id).
      const bool first_of_op = a->correlation && launched_.insert(a->correlation).second;
      if (first_of_op) {
        act.flow.id = a->correlation;
        act.flow.type = libkineto::kLinkAsyncCpuGpu;
        act.flow.start = false;
      }
      if (a->correlation) {
        act.addMetadata("correlation", a->correlation);
        if (linked) act.linked = linked(static_cast<int32_t>(a->correlation));
      }
      logger.handleActivity(act);
      if (first_of_op) log_launch(logger, *a, linked);
      if (a->depth != 0 || a->estimated_us < 0) continue;
      // The estimated track: on Trainium the device starts an op once the
      // host has issued it and the op before it is done.
      int64_t& end = estimate_end[a->device];
      auto& est = add(libkineto::GenericTraceActivity(buffer_->span, kEstimateType, a->name + " (estimated)"), *a);
      est.startTime = std::max(a->start_ns, end);
      est.endTime = est.startTime + static_cast<int64_t>(a->estimated_us * 1000.0);
      end = est.endTime;
      est.resource = kEstimateTrack;
      est.addMetadataQuoted("kind", kind_name(a->kind));
      est.addMetadataQuoted("engine", a->engine);
      est.addMetadata("estimated Trainium2 us", a->estimated_us);
      est.addMetadata("measured us", (a->end_ns - a->start_ns) / 1000.0);
      estimate_devices_.insert(a->device);
      logger.handleActivity(est);
    }
  }

  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override {
    int32_t device = streams_.empty() ? 0 : streams_.begin()->first;
    return std::make_unique<libkineto::DeviceInfo>(
        libkineto::DeviceInfo{device, device, "neuron " + std::to_string(device), "NeuronCore (emulated)"});
  }

  std::vector<libkineto::ResourceInfo> getResourceInfos() override {
    std::vector<libkineto::ResourceInfo> out;
    for (const auto& [device, stream] : streams_) {
      out.push_back(libkineto::ResourceInfo{stream, stream, device, "stream " + std::to_string(stream)});
    }
    for (int32_t device : estimate_devices_) {
      out.push_back(libkineto::ResourceInfo{kEstimateTrack, kEstimateTrack, device, "estimated Trainium2"});
    }
    return out;
  }

  // Kineto keeps the buffer alive with the trace: the activities handed to
  // the logger live in it.
  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override { return std::move(buffer_); }

  void pushCorrelationId(uint64_t id) override { push_correlation(id); }
  void popCorrelationId() override { pop_correlation(); }

 private:
  libkineto::GenericTraceActivity& add(libkineto::GenericTraceActivity&& act, const Activity& a) {
    buffer_->activities.push_back(std::make_unique<libkineto::GenericTraceActivity>(std::move(act)));
    auto& ref = *buffer_->activities.back();
    ref.device = a.device;
    ref.id = static_cast<int32_t>(buffer_->activities.size());
    return ref;
  }

  // The host side of an activity, as a runtime event on the thread that ran
  // it (cudaLaunchKernel's place in a CUDA trace): the flow from the CPU op
  // to the device track starts here.
  void log_launch(libkineto::ActivityLogger& logger, const Activity& a, libkineto::getLinkedActivityCallback& linked) {
    auto& rt = add(libkineto::GenericTraceActivity(buffer_->span, libkineto::ActivityType::PRIVATEUSE1_RUNTIME,
                                                   a.kind == Kind::kCopy ? "neuron memcpy" : "neuron launch"),
                   a);
    rt.device = static_cast<int32_t>(::getpid());
    rt.resource = a.host_tid;
    rt.threadId = static_cast<int32_t>(a.host_tid);
    rt.startTime = a.start_ns;
    rt.endTime = a.start_ns + std::min<int64_t>(a.end_ns - a.start_ns, 1000);
    rt.flow.id = a.correlation;
    rt.flow.type = libkineto::kLinkAsyncCpuGpu;
    rt.flow.start = true;
    rt.addMetadata("correlation", a.correlation);
    if (linked) rt.linked = linked(static_cast<int32_t>(a.correlation));
    logger.handleActivity(rt);
  }

  std::shared_ptr<Buffer> buf_;
  std::vector<Activity> activities_;
  std::unique_ptr<libkineto::CpuTraceBuffer> buffer_ = std::make_unique<libkineto::CpuTraceBuffer>();
  std::set<std::pair<int32_t, int64_t>> streams_;
  std::set<int32_t> estimate_devices_;
  std::set<uint64_t> launched_;  // correlation ids whose flow has started
};

class NeuronActivityProfiler : public libkineto::IActivityProfiler {
 public:
  const std::string& name() const override { return name_; }
  const std::set<libkineto::ActivityType>& availableActivities() const override { return activities_; }

  std::unique_ptr<libkineto::IActivityProfilerSession> configure(const std::set<libkineto::ActivityType>& types,
                                                                 const libkineto::Config&) override {
    // Device activity asked for (ProfilerActivity.PrivateUse1); a CPU-only
    // profile records nothing here.
    if (types.count(libkineto::ActivityType::CONCURRENT_KERNEL) || types.count(libkineto::ActivityType::GPU_MEMCPY)) {
      return std::make_unique<Session>();
    }
    return nullptr;
  }

  std::unique_ptr<libkineto::IActivityProfilerSession> configure(int64_t, int64_t,
                                                                 const std::set<libkineto::ActivityType>& types,
                                                                 const libkineto::Config& config) override {
    return configure(types, config);
  }

 private:
  std::string name_{"neuron"};
  std::set<libkineto::ActivityType> activities_{
      libkineto::ActivityType::CONCURRENT_KERNEL, libkineto::ActivityType::GPU_MEMCPY,
      libkineto::ActivityType::COLLECTIVE_COMM, libkineto::ActivityType::PRIVATEUSE1_RUNTIME};
};

}  // namespace
}  // namespace torch_neuronx::trace

using NeuronActivityProfiler = torch_neuronx::trace::NeuronActivityProfiler;
REGISTER_PRIVATEUSE1_PROFILER(NeuronActivityProfiler);

#include "profiler/NeuronTrace.h"

#include <c10/util/ApproximateClock.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>

#include "runtime/NeuronFunctions.h"
#include "runtime/NeuronStream.h"

namespace torch_neuronx::trace {

std::atomic<int> g_subscribers{0};

namespace {

std::mutex g_mu;
std::vector<std::shared_ptr<Buffer>>& subscribers() {
  static auto* v = new std::vector<std::shared_ptr<Buffer>>();
  return *v;
}

thread_local std::vector<uint64_t> t_correlation;
thread_local int32_t t_depth = 0;

int64_t host_tid() {
  thread_local const int64_t tid = static_cast<int64_t>(::syscall(SYS_gettid));
  return tid;
}

std::vector<int64_t> shape_of(const at::Tensor& t) { return std::vector<int64_t>(t.sizes().begin(), t.sizes().end()); }

}  // namespace

int64_t now_ns() { return c10::getTime(); }
int64_t this_host_tid() { return host_tid(); }

namespace {
std::atomic<Estimator> g_estimator{nullptr};
}
void set_estimator(Estimator estimator) { g_estimator.store(estimator); }
void estimate(std::vector<Activity>& activities) {
  if (Estimator e = g_estimator.load()) e(activities);
}

std::shared_ptr<Buffer> subscribe() {
  auto buf = std::make_shared<Buffer>();
  std::lock_guard<std::mutex> lock(g_mu);
  subscribers().push_back(buf);
  g_subscribers.fetch_add(1);
  return buf;
}

std::vector<Activity> take(const std::shared_ptr<Buffer>& buf) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto& subs = subscribers();
  auto it = std::find(subs.begin(), subs.end(), buf);
  if (it != subs.end()) {
    subs.erase(it);
    g_subscribers.fetch_sub(1);
  }
  return std::move(buf->activities);
}

void record(Activity&& a) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto& subs = subscribers();
  if (subs.empty()) return;
  for (size_t i = 1; i < subs.size(); ++i) subs[i]->activities.push_back(a);
  subs[0]->activities.push_back(std::move(a));
}

void push_correlation(uint64_t id) { t_correlation.push_back(id); }
void pop_correlation() {
  if (!t_correlation.empty()) t_correlation.pop_back();
}

uint64_t current_correlation() { return t_correlation.empty() ? 0 : t_correlation.back(); }

void ActivityScope::begin(Kind kind, std::string name, const char* detail) {
  a_ = std::make_unique<Activity>();
  a_->kind = kind;
  a_->name = std::move(name);
  a_->detail = detail;
  a_->device = current_device();
  a_->stream = current_stream(a_->device).id();
  a_->correlation = t_correlation.empty() ? 0 : t_correlation.back();
  a_->depth = t_depth++;
  a_->host_tid = host_tid();
  a_->start_ns = now_ns();
}

void ActivityScope::end() {
  --t_depth;
  a_->end_ns = now_ns();
  record(std::move(*a_));
}

void ActivityScope::move_to(int32_t device) {
  a_->device = device;
  a_->stream = current_stream(static_cast<c10::DeviceIndex>(device)).id();
}

void ActivityScope::note(std::vector<std::vector<int64_t>>& shapes, const at::Tensor& t) {
  if (!t.defined()) return;
  shapes.push_back(shape_of(t));
  if (t.is_privateuseone()) a_->bytes += static_cast<int64_t>(t.numel()) * t.element_size();
  if (a_->dtype == c10::ScalarType::Undefined && (t.is_floating_point() || t.is_complex())) a_->dtype = t.scalar_type();
}

}  // namespace torch_neuronx::trace

namespace torch_neuronx::strict {

std::atomic<Hook> g_hook{nullptr};

void set_hook(Hook hook) { g_hook.store(hook); }

void report(const char* kind, const std::string& op, const std::string& detail) {
  if (Hook h = g_hook.load()) h(kind, op, detail);
}

}  // namespace torch_neuronx::strict

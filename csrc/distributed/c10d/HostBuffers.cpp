#include "distributed/c10d/HostBuffers.h"

#include <cstring>

namespace torch_neuronx::dist {
namespace {

// The process group waits for the tensors' producers on the calling thread,
// before it queues the collective.
constexpr auto kWaited = HostAccess::Producers::kAlreadyWaited;

}  // namespace

char* HostBuffers::access(const at::Tensor& t, HostAccess::Mode mode) {
  access_.emplace_back(t, mode, kWaited);
  return access_.back().data();
}

const char* HostBuffers::input(const at::Tensor& t) { return access(t, HostAccess::Mode::kRead); }
char* HostBuffers::output(const at::Tensor& t) { return access(t, HostAccess::Mode::kWrite); }
char* HostBuffers::inout(const at::Tensor& t) { return access(t, HostAccess::Mode::kReadWrite); }

const char* HostBuffers::packed_inputs(const std::vector<at::Tensor>& ts) {
  size_t total = 0;
  for (const at::Tensor& t : ts) total += t.nbytes();
  std::vector<char>& buf = packed_.emplace_back(total);
  size_t off = 0;
  for (const at::Tensor& t : ts) {
    HostAccess in(t, HostAccess::Mode::kRead, kWaited);
    if (t.nbytes() > 0) std::memcpy(buf.data() + off, in.data(), t.nbytes());
    off += t.nbytes();
  }
  return buf.data();
}

char* HostBuffers::packed_outputs(const std::vector<at::Tensor>& ts) {
  size_t total = 0;
  for (const at::Tensor& t : ts) total += t.nbytes();
  std::vector<char>& buf = packed_.emplace_back(total);
  unpack_.emplace_back(&buf, ts);
  return buf.data();
}

void HostBuffers::finish() {
  for (HostAccess& a : access_) a.finish();
  for (auto& [buf, ts] : unpack_) {
    size_t off = 0;
    for (const at::Tensor& t : ts) {
      HostAccess out(t, HostAccess::Mode::kWrite, kWaited);
      if (t.nbytes() > 0) std::memcpy(out.data(), buf->data() + off, t.nbytes());
      out.finish();
      off += t.nbytes();
    }
  }
  access_.clear();
  unpack_.clear();
  packed_.clear();
}

}  // namespace torch_neuronx::dist

// The host bytes a collective reads and writes, made from its tensors on the
// group's worker thread: a tensor's own bytes when it is a CPU tensor or its
// device is host-addressable, otherwise a staged copy (runtime/NeuronHostAccess.h,
// counted). A list of equal-sized tensors is packed into one buffer, part r at
// r * bytes (the layout the transports take). finish() copies what was
// written back into the tensors: staged copies and unpacked lists.
#pragma once

#include <ATen/core/Tensor.h>

#include <deque>
#include <vector>

#include "runtime/NeuronHostAccess.h"

namespace torch_neuronx::dist {

class HostBuffers {
 public:
  const char* input(const at::Tensor& t);
  char* output(const at::Tensor& t);  // written only
  char* inout(const at::Tensor& t);   // read, then written
  // Every tensor's bytes, one after the other (empty list: a null pointer).
  const char* packed_inputs(const std::vector<at::Tensor>& ts);
  char* packed_outputs(const std::vector<at::Tensor>& ts);
  void finish();

 private:
  char* access(const at::Tensor& t, HostAccess::Mode mode);

  std::deque<HostAccess> access_;
  std::deque<std::vector<char>> packed_;
  std::vector<std::pair<const std::vector<char>*, std::vector<at::Tensor>>> unpack_;
};

}  // namespace torch_neuronx::dist

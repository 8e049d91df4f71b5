// The error of a collective that cannot complete: a dead or late peer, a
// mismatch between the ranks' calls, a transport that failed. The process
// group turns it into a c10::DistBackendError naming the call and the group.
#pragma once

#include <stdexcept>

#include "runtime/NeuronExport.h"

namespace torch_neuronx::dist {

// A collective that cannot complete: a dead or late peer, or a mismatch.
class TORCH_NEURONX_API DistError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace torch_neuronx::dist

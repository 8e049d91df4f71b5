// What every rank of a group must pass alike to one collective; the
// transports compare the ranks' signatures before any data moves.
#pragma once

#include <cstdint>

namespace torch_neuronx::dist {

// What each rank says about its next collective, checked across ranks.
struct CallSignature {
  uint32_t op = 0;     // collective kind
  int32_t dtype = -1;  // c10::ScalarType
  int64_t numel = 0;   // elements of this rank's input
  int64_t root = -1;   // root rank, reduce op or -1
};

}  // namespace torch_neuronx::dist

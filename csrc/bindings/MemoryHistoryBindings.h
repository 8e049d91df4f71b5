// Binds the memory-history recorder (MemoryHistoryBindings.cpp) into torch_neuronx._C.
#pragma once

#include <pybind11/pybind11.h>

namespace torch_neuronx {
void bind_memory_history(pybind11::module& m);
}

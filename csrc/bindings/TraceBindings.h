// Binds profiler/NeuronTrace.h into torch_neuronx._C (see TraceBindings.cpp).
#pragma once

#include <pybind11/pybind11.h>

namespace torch_neuronx {
void bind_trace(pybind11::module& m);
}

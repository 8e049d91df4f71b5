// Binds the fast paths of Inductor's generated wrapper for neuron into
// torch_neuronx._C (see CompileBindings.cpp).
#pragma once

#include <pybind11/pybind11.h>

namespace torch_neuronx {
void bind_compile(pybind11::module& m);
}

// Forwarding ATen DispatchStubs from PrivateUse1 to their CPU kernels.
//
// A structured impl calls `stub(device_type(), ...)`; on neuron tensors the
// device type is PrivateUse1. TORCH_NEURONX_FORWARD_TO_CPU(stub) registers,
// for that slot, a function that calls the same stub for the CPU, so the
// CPU's vectorized kernel (the one this host's CPU capability selects) runs
// on device memory.
//
// Include this header before any other ATen header in a translation unit:
// DispatchStub's out-of-line functions take one pointer per CPU capability
// torch was built with, so the capability macros must match torch's build
// (x86-64 wheels: AVX2 and AVX512). A mismatch fails at link time.
#pragma once

#if defined(__x86_64__) || defined(_M_X64)
#ifndef HAVE_AVX2_CPU_DEFINITION
#define HAVE_AVX2_CPU_DEFINITION
#endif
#ifndef HAVE_AVX512_CPU_DEFINITION
#define HAVE_AVX512_CPU_DEFINITION
#endif
#endif

#include <ATen/native/DispatchStub.h>
#include <c10/core/DeviceType.h>

#include <utility>

namespace torch_neuronx {

template <auto& Stub, class FnPtr>
struct CpuForwarder;

template <auto& Stub, class R, class... A>
struct CpuForwarder<Stub, R (*)(A...)> {
  static R call(A... args) { return Stub(c10::DeviceType::CPU, std::forward<A>(args)...); }
};

#define TORCH_NEURONX_FORWARD_TO_CPU(stub) \
  stub.set_privateuse1_dispatch_ptr(       \
      &::torch_neuronx::CpuForwarder<stub, typename std::remove_reference_t<decltype(stub)>::FnPtr>::call)

}  // namespace torch_neuronx

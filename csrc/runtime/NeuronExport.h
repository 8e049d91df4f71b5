// Export macro of the core library (symbols are hidden unless marked).
#pragma once
#define TORCH_NEURONX_API __attribute__((visibility("default")))

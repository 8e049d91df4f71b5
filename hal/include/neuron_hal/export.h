/* Symbol visibility of the HAL's C ABI (everything else stays hidden). */
#ifndef NEURON_HAL_EXPORT_H
#define NEURON_HAL_EXPORT_H
#define NHAL_API __attribute__((visibility("default")))
#endif

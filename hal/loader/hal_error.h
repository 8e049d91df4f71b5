// Internal helpers for drivers: set the thread's error message and return a
// status in one expression, and format byte counts for messages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "neuron_hal/status.h"

namespace nhal {

// Records printf-style message for nhal_last_error_message(); returns status.
nhal_status fail(nhal_status status, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// "3.20 GiB", "512 B": what the messages show to a user.
std::string format_bytes(uint64_t bytes);

// "24G", "512M", "1073741824", "1.5GiB" (settings.cpp); false on anything else.
bool parse_size(const std::string& text, uint64_t* out);

}  // namespace nhal

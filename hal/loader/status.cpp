#include <cstdarg>
#include <cstdio>
#include <string>

#include "hal_error.h"

namespace {
thread_local std::string g_last_message;
}

extern "C" const char* nhal_status_name(nhal_status status) {
  switch (status) {
    case NHAL_STATUS_OK:
      return "OK";
    case NHAL_STATUS_INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case NHAL_STATUS_OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case NHAL_STATUS_OUT_OF_MEMORY:
      return "OUT_OF_MEMORY";
    case NHAL_STATUS_HOST_OUT_OF_MEMORY:
      return "HOST_OUT_OF_MEMORY";
    case NHAL_STATUS_NOT_READY:
      return "NOT_READY";
    case NHAL_STATUS_UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case NHAL_STATUS_INTERNAL:
      return "INTERNAL";
  }
  return "UNKNOWN_STATUS";
}

extern "C" const char* nhal_last_error_message(void) { return g_last_message.c_str(); }

namespace nhal {

nhal_status fail(nhal_status status, const char* fmt, ...) {
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  vsnprintf(buf, sizeof(buf), fmt, args);
  va_end(args);
  g_last_message = buf;
  return status;
}

std::string format_bytes(uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char buf[64];
  if (unit == 0) {
    snprintf(buf, sizeof(buf), "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    snprintf(buf, sizeof(buf), "%.2f %s", value, units[unit]);
  }
  return buf;
}

}  // namespace nhal

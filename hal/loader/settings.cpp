// The parsing rules of neuron_hal/settings.h.
#include "neuron_hal/settings.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

#include "hal_error.h"

namespace {

std::string lower_trimmed(const char* text) {
  std::string s;
  for (const char* c = text; *c; ++c) {
    if (!std::isspace(static_cast<unsigned char>(*c))) s.push_back(static_cast<char>(std::tolower(*c)));
  }
  return s;
}

}  // namespace

namespace nhal {

bool parse_size(const std::string& text, uint64_t* out) {
  std::string s;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) s.push_back(static_cast<char>(std::toupper(c)));
  }
  size_t pos = 0, dots = 0, digits = 0;
  for (; pos < s.size() && (std::isdigit(static_cast<unsigned char>(s[pos])) || s[pos] == '.'); ++pos) {
    if (s[pos] == '.')
      ++dots;
    else
      ++digits;
  }
  if (digits == 0 || dots > 1 || s[0] == '.' || s[pos - 1] == '.') return false;
  const double value = std::strtod(s.substr(0, pos).c_str(), nullptr);
  std::string unit = s.substr(pos);
  if (unit.size() >= 2 && unit.substr(unit.size() - 2) == "IB")
    unit.resize(unit.size() - 2);
  else if (unit.size() >= 2 && unit.back() == 'B')
    unit.pop_back();
  double scale = 1;
  if (unit == "K")
    scale = 1024.0;
  else if (unit == "M")
    scale = 1024.0 * 1024;
  else if (unit == "G")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "T")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else if (!unit.empty())
    return false;
  const double bytes = value * scale;
  if (!(bytes >= 1) || bytes > 1e18) return false;
  *out = static_cast<uint64_t>(std::llround(bytes));
  return true;
}

}  // namespace nhal

extern "C" nhal_status nhal_env_flag(const char* name, int default_value, int* out) {
  const char* v = std::getenv(name);
  const std::string s = v ? lower_trimmed(v) : std::string();
  if (s.empty())
    *out = default_value;
  else if (s == "1" || s == "true" || s == "yes" || s == "on")
    *out = 1;
  else if (s == "0" || s == "false" || s == "no" || s == "off")
    *out = 0;
  else {
    return nhal::fail(NHAL_STATUS_INVALID_ARGUMENT,
                      "%s='%s' is not valid: it accepts 0/1, true/false, yes/no, on/off (any case). Unset it "
                      "for the default (%d)",
                      name, v, default_value);
  }
  return NHAL_STATUS_OK;
}

extern "C" nhal_status nhal_env_size(const char* name, uint64_t* out) {
  const char* v = std::getenv(name);
  if (!v || lower_trimmed(v).empty()) return NHAL_STATUS_OK;
  if (!nhal::parse_size(v, out)) {
    return nhal::fail(NHAL_STATUS_INVALID_ARGUMENT,
                      "%s='%s' is not valid: it accepts bytes, or a number with K, M, G or T (1024-based; "
                      "`512M`, `1.5G`)",
                      name, v);
  }
  return NHAL_STATUS_OK;
}

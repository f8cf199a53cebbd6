// Values as numbers (see number_text.h).
#include "sweep/number_text.h"

#include <cmath>
#include <cstdlib>

namespace cellgan::sweep {

std::optional<double> number_of(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double x = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(x)) return std::nullopt;
  return x;
}

}  // namespace cellgan::sweep

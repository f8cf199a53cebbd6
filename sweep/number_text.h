// A configuration value written as text, read as a number when it is one:
// the sweep compares varied values by what they mean (YAML's 1e-3 and
// 0.001 are one value), orders them by size and plots them on a numeric
// axis.
//
// Thread-safety: a pure function.
#pragma once

#include <optional>
#include <string>

namespace cellgan::sweep {

// The finite number the whole of `text` spells (as strtod reads it);
// std::nullopt for anything else ("", "64k", "inf", "adam").
std::optional<double> number_of(const std::string& text);

}  // namespace cellgan::sweep

// SectionTable<S>: builds one section's ConfigSection (config_keys.h) from
// typed entries over its struct S, e.g.
//
//   SectionTable<GridConfig>("grid", &Config::grid)
//       .integer("rows", &GridConfig::rows, span<std::int64_t>(1, 64), "grid rows")
//       .choice("neighbourhood", &GridConfig::neighbourhood, kNeighbourhoodNames, "...")
//       .build();
//
// Each entry method writes, once, how its type is read from YAML (yaml-cpp's
// conversions, the same InputError wording for every key of the type), how
// its range is checked and shown, written, compared and changed. Only
// config_keys.cpp uses this header; everything else reads the built tables.
//
// Thread-safety: a SectionTable is a local value of the thread building it.
#pragma once

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/config.h"
#include "common/config_keys.h"

namespace cellgan::config_table {

// The names of a choice, in the order documented and listed in messages.
template <typename E>
using Names = std::vector<std::pair<std::string, E>>;

// The name of `value` in `names` ("?" if it has none).
template <typename E>
const char* name_of(const Names<E>& names, const E& value) {
  for (const auto& [name, v] : names)
    if (v == value) return name.c_str();
  return "?";
}

// The allowed values of a number: optional bounds, each inclusive or not,
// and an optional note for people ("0 = off"). NaN is never inside.
template <typename T>
struct Range {
  std::optional<T> lo, hi;
  bool lo_open = false;
  bool hi_open = false;
  std::string note;

  bool contains(T v) const {
    const bool above_lo = !lo || (lo_open ? v > *lo : v >= *lo);
    const bool below_hi = !hi || (hi_open ? v < *hi : v <= *hi);
    return above_lo && below_hi;
  }
  // ">= 1", "> 0", "1..64" (integers), "in [0, 1)" (numbers), then
  // " (note)"; the note alone when there are no bounds.
  std::string text() const {
    std::string s;
    if (lo && hi && std::is_integral_v<T> && !lo_open && !hi_open)
      s = fmt::format("{}..{}", *lo, *hi);
    else if (lo && hi)
      s = fmt::format("in {}{}, {}{}", lo_open ? "(" : "[", *lo, *hi, hi_open ? ")" : "]");
    else if (lo)
      s = fmt::format("{} {}", lo_open ? ">" : ">=", *lo);
    else if (hi)
      s = fmt::format("{} {}", hi_open ? "<" : "<=", *hi);
    if (note.empty()) return s;
    return s.empty() ? note : s + " (" + note + ")";
  }
};

// v >= lo.
template <typename T>
Range<T> at_least(T lo, std::string note = "") {
  return Range<T>{lo, std::nullopt, false, false, std::move(note)};
}
// v > lo.
template <typename T>
Range<T> above(T lo) {
  return Range<T>{lo, std::nullopt, true, false, ""};
}
// lo <= v <= hi.
template <typename T>
Range<T> span(T lo, T hi) {
  return Range<T>{lo, hi, false, false, ""};
}
// lo <= v <= hi, with a note for people ("0 = off").
template <typename T>
Range<T> span_noted(T lo, T hi, std::string note) {
  return Range<T>{lo, hi, false, false, std::move(note)};
}
// lo < v <= hi.
template <typename T>
Range<T> above_up_to(T lo, T hi) {
  return Range<T>{lo, hi, true, false, ""};
}
// lo <= v < hi.
template <typename T>
Range<T> up_to_below(T lo, T hi) {
  return Range<T>{lo, hi, false, true, ""};
}

// Any value of the type here; `note` says which rule of the section limits
// it ("> heartbeat_interval_ms").
template <typename T>
Range<T> ruled_by(std::string note) {
  return Range<T>{std::nullopt, std::nullopt, false, false, std::move(note)};
}

// Whether a string key may be empty.
enum class Text { kAny, kNonEmpty };

namespace detail {

// "an integer", as InputError messages say it; type_word<T>() is "integer".
template <typename T>
const char* type_phrase() {
  if constexpr (std::is_same_v<T, std::string>) return "a string";
  else if constexpr (std::is_same_v<T, bool>) return "a boolean";
  else if constexpr (std::is_floating_point_v<T>) return "a number";
  else if constexpr (std::is_unsigned_v<T>) return "a non-negative integer";
  else return "an integer";
}
template <typename T>
std::string type_word() {
  const std::string phrase = type_phrase<T>();
  return phrase.substr(phrase.find(' ') + 1);
}

// Reads a scalar with yaml-cpp's conversion; "" or why not.
template <typename T>
std::string read_scalar(const YAML::Node& value, T& out) {
  if (!value.IsScalar()) return fmt::format("expected {}", type_phrase<T>());
  try {
    out = value.as<T>();
  } catch (const YAML::Exception&) {
    return fmt::format("expected {}, got '{}'", type_phrase<T>(), value.Scalar());
  }
  return "";
}

template <typename T>
std::string show(const T& v) {
  if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
  else return fmt::format("{}", v);
}

// A value inside `range` other than `v`, if there is one near it.
template <typename T>
std::optional<T> other_in(const Range<T>& range, T v) {
  T step = 1;
  if constexpr (std::is_floating_point_v<T>) step = v == 0 ? 0.25 : std::fabs(v) / 4;
  for (T candidate : {v + step, v - step})
    if (candidate != v && range.contains(candidate)) return candidate;
  return std::nullopt;
}

}  // namespace detail

template <typename S>
class SectionTable {
 public:
  // A section held in Config by `member` (&Config::training).
  SectionTable(std::string name, S Config::*member)
      : section_{std::move(name), {}, nullptr},
        get_([member](const Config& c) -> const S& { return c.*member; }),
        get_mut_([member](Config& c) -> S& { return c.*member; }) {}

  // The top level: keys held in Config itself (S = Config).
  static SectionTable top_level() {
    return SectionTable("", [](const Config& c) -> const S& { return c; }, [](Config& c) -> S& { return c; });
  }

  SectionTable& integer(const char* key, std::int64_t S::*field, Range<std::int64_t> range, const char* doc) {
    return ranged(key, field, std::move(range), doc);
  }
  SectionTable& number(const char* key, double S::*field, Range<double> range, const char* doc) {
    return ranged(key, field, std::move(range), doc);
  }
  // Any value that yaml-cpp reads as a non-negative integer.
  SectionTable& natural(const char* key, std::uint64_t S::*field, const char* doc) {
    return ranged(key, field, Range<std::uint64_t>{}, doc);
  }
  SectionTable& boolean(const char* key, bool S::*field, const char* doc) {
    ConfigKey k = plain(key, field, doc);
    k.change = [get = get_mut_, field](Config& c) {
      bool& v = get(c).*field;
      v = !v;
      return true;
    };
    return add(std::move(k));
  }
  SectionTable& text(const char* key, std::string S::*field, Text rule, const char* doc) {
    ConfigKey k = plain(key, field, doc);
    if (rule == Text::kNonEmpty) {
      k.allowed = "non-empty";
      k.check = [get = get_, field](const Config& c) {
        return (get(c).*field).empty() ? std::string("must not be empty") : std::string();
      };
    }
    k.change = [get = get_mut_, field](Config& c) {
      std::string& v = get(c).*field;
      v = v.empty() ? "other: #1" : v + " other: #1";  // characters YAML must quote
      return true;
    };
    return add(std::move(k));
  }
  // One of `names`: an enum, or a string limited to a list (E = std::string).
  template <typename E>
  SectionTable& choice(const char* key, E S::*field, const Names<E>& names, const char* doc) {
    std::string list;
    std::string doc_list;
    for (const auto& [name, value] : names) {
      list += (list.empty() ? "" : ", ") + name;
      doc_list += (doc_list.empty() ? "`" : ", `") + name + "`";
    }
    ConfigKey k = base(key, "choice", doc, field);
    k.allowed = doc_list;
    k.read = [get = get_mut_, field, names, list](const YAML::Node& value, Config& c) {
      if (!value.IsScalar()) return fmt::format("expected one of {}", list);
      const std::string text = value.Scalar();
      for (const auto& [name, v] : names)
        if (name == text) {
          get(c).*field = v;
          return std::string();
        }
      return fmt::format("'{}' is not one of {}", text, list);
    };
    k.write = [get = get_, field, names](YAML::Emitter& out, const Config& c) {
      out << name_of(names, get(c).*field);
    };
    k.show = [get = get_, field, names](const Config& c) { return std::string(name_of(names, get(c).*field)); };
    k.change = [get = get_mut_, field, names](Config& c) {
      E& v = get(c).*field;
      for (std::size_t i = 0; i < names.size(); ++i)
        if (names[i].second == v && names.size() > 1) {
          v = names[(i + 1) % names.size()].second;
          return true;
        }
      return false;
    };
    return add(std::move(k));
  }

  // How the last key's empty default is resolved at run time.
  SectionTable& default_note(const char* note) {
    section_.keys.back().default_note = note;
    return *this;
  }
  // The section's rules that involve two keys (see ConfigSection::rules).
  SectionTable& rules(std::function<void(const Config&, const KeyFailure&)> f) {
    section_.rules = std::move(f);
    return *this;
  }
  ConfigSection build() { return std::move(section_); }

 private:
  using Get = std::function<const S&(const Config&)>;
  using GetMut = std::function<S&(Config&)>;

  SectionTable(std::string name, Get get, GetMut get_mut)
      : section_{std::move(name), {}, nullptr}, get_(std::move(get)), get_mut_(std::move(get_mut)) {}

  SectionTable& add(ConfigKey k) {
    section_.keys.push_back(std::move(k));
    return *this;
  }

  // What every key has: name, doc, comparison, and no check of its own.
  template <typename T>
  ConfigKey base(const char* key, std::string type, const char* doc, T S::*field) {
    ConfigKey k;
    k.name = key;
    k.type = std::move(type);
    k.doc = doc;
    k.check = [](const Config&) { return std::string(); };
    k.same = [get = get_, field](const Config& a, const Config& b) { return get(a).*field == get(b).*field; };
    return k;
  }

  // A scalar read with yaml-cpp's conversion to T and written as T.
  template <typename T>
  ConfigKey plain(const char* key, T S::*field, const char* doc) {
    ConfigKey k = base(key, detail::type_word<T>(), doc, field);
    k.read = [get = get_mut_, field](const YAML::Node& value, Config& c) {
      return detail::read_scalar(value, get(c).*field);
    };
    k.write = [get = get_, field](YAML::Emitter& out, const Config& c) { out << get(c).*field; };
    k.show = [get = get_, field](const Config& c) { return detail::show(get(c).*field); };
    return k;
  }

  template <typename T>
  SectionTable& ranged(const char* key, T S::*field, Range<T> range, const char* doc) {
    ConfigKey k = plain(key, field, doc);
    k.allowed = range.text();
    k.check = [get = get_, field, range](const Config& c) {
      const T v = get(c).*field;
      if (range.contains(v)) return std::string();
      return fmt::format("{} is out of range: expected {}", v, range.text());
    };
    k.change = [get = get_mut_, field, range](Config& c) {
      T& v = get(c).*field;
      const std::optional<T> other = detail::other_in(range, v);
      if (other) v = *other;
      return other.has_value();
    };
    return add(std::move(k));
  }

  ConfigSection section_;
  Get get_;
  GetMut get_mut_;
};

}  // namespace cellgan::config_table

// Filling the pages' templates (see page_assets.h).
#include <stdexcept>

#include "master/page_assets.h"

namespace cellgan {

std::string fill_template(std::string_view page, const std::map<std::string, std::string_view>& values) {
  std::string out;
  out.reserve(page.size());
  std::size_t at = 0;
  for (;;) {
    const std::size_t open = page.find("{{", at);
    if (open == std::string_view::npos) break;
    const std::size_t close = page.find("}}", open + 2);
    if (close == std::string_view::npos) break;
    const std::string name(page.substr(open + 2, close - open - 2));
    const auto it = values.find(name);
    if (it == values.end()) throw std::invalid_argument("page template: no value for {{" + name + "}}");
    out.append(page.substr(at, open - at));
    out.append(it->second);
    at = close + 2;
  }
  out.append(page.substr(at));
  return out;
}

}  // namespace cellgan

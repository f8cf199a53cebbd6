// The page of GET / (see status_page.h).
#include "master/status_page.h"

#include "master/page_assets.h"

namespace cellgan {

const std::string& status_page_html() {
  static const std::string page = fill_template(
      status_page_template(), {{"PAGE_CSS", page_css()}, {"CURVES_HTML", curves_html()}, {"CURVES_JS", curves_js()}});
  return page;
}

}  // namespace cellgan

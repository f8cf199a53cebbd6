// The files of the status page and report.html, built into the executable
// (master/CMakeLists.txt embeds them from master/pages/ and data/npm/), and
// the one way their templates are filled.
//
//   chart_js()              Chart.js 4's UMD bundle (npm chart.js, MIT
//                           licence), which defines window.Chart
//   curves_js()             drawCurves(history, unit) (pages/curves.js)
//   curves_html()           the curves' holders (pages/curves.html)
//   page_css()              the style both pages share
//   status_page_template()  pages/status.html: {{PAGE_CSS}},
//                           {{CURVES_HTML}}, {{CURVES_JS}}
//   report_page_template()  pages/report.html (run_report.h)
//
// Thread-safety: constants, and a pure function.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace cellgan {

std::string_view chart_js();
std::string_view curves_js();
std::string_view curves_html();
std::string_view page_css();
std::string_view status_page_template();
std::string_view report_page_template();

// `page` with every {{NAME}} replaced by values.at(NAME), in one pass (a
// value is never searched for placeholders itself). Throws
// std::invalid_argument naming a placeholder without a value.
std::string fill_template(std::string_view page, const std::map<std::string, std::string_view>& values);

}  // namespace cellgan

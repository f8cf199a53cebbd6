// The `status` section: off by default, on this host only by default, and
// a port out of range is one line naming the key (the address is checked
// when the master starts: tests/master/status_server_test.cpp).
#include <gtest/gtest.h>

#include "common/config.h"
#include "tests/common/test_files.h"

namespace cellgan {
namespace {

using test::input_error_of;

TEST(StatusConfig, IsOffAndLocalByDefault) {
  const Config c = parse_config("seed: 3\n", "a.yaml");
  EXPECT_EQ(c.status.port, 0);
  EXPECT_EQ(c.status.bind, "127.0.0.1");
}

TEST(StatusConfig, TakesAPortAndAnIpv4OrIpv6Address) {
  for (const char* bind : {"0.0.0.0", "10.1.2.3", "::1", "::"}) {
    const Config c = parse_config(std::string("status: {port: 8080, bind: '") + bind + "'}\n", "a.yaml");
    EXPECT_EQ(c.status.port, 8080);
    EXPECT_EQ(c.status.bind, bind);
    EXPECT_TRUE(same_config(c, parse_config(to_yaml(c), "again.yaml"))) << bind;
  }
}

TEST(StatusConfig, RejectsPortsOutOfRange) {
  EXPECT_EQ(input_error_of([] { parse_config("status: {port: 65536}\n", "a.yaml"); })
                .rfind("a.yaml: status.port: ", 0),
            0u);
  EXPECT_EQ(input_error_of([] { parse_config("status: {port: -1}\n", "a.yaml"); }).rfind("a.yaml: status.port: ", 0),
            0u);
}

}  // namespace
}  // namespace cellgan

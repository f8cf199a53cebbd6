// The status server over a real socket on an ephemeral port: its routes,
// its answers to what is not a proper GET, and that it goes on answering
// after malformed, oversized, half-sent and idle requests.
#include "master/status_server.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <memory>
#include <thread>
#include <vector>

#include "common/error.h"
#include "master/job_status.h"
#include "tests/common/test_files.h"
#include "tests/master/http_client.h"

namespace cellgan {
namespace {

using std::chrono::milliseconds;
using test::ClientSocket;
using test::http_exchange;
using test::http_get;
using test::http_request;
using test::parse_answer;

struct Served {
  explicit Served(StatusServerOptions options = {})
      : board(2, 3, "coevolution", "mode_tvd", 5, 2, {1, 1, 1, 2, 2, 2}, StatusBoard::Clock::now()),
        server(std::make_unique<StatusServer>(board, options)),
        port(server->port()) {
    board.set_phase("training");
    board.cell_generation(4, 2, 2, 0.25);
  }
  StatusBoard board;
  std::unique_ptr<StatusServer> server;
  int port;
};

// The server still answers a proper request.
void expect_alive(int port) {
  const auto a = http_get(port, "/status");
  EXPECT_EQ(a.status, 200) << "the server no longer answers";
}

TEST(StatusServer, ListensOnAnEphemeralPortAndSaysWhere) {
  Served s;
  EXPECT_GT(s.port, 0);
  EXPECT_EQ(s.server->url(), fmt::format("http://127.0.0.1:{}/", s.port));
}

TEST(StatusServer, StatusIsTheBoardAsJson) {
  Served s;
  const auto a = http_get(s.port, "/status");
  ASSERT_EQ(a.status, 200);
  EXPECT_NE(a.headers.find("Content-Type: application/json"), std::string::npos) << a.headers;
  const auto j = nlohmann::json::parse(a.body);
  EXPECT_EQ(j["phase"], "training");
  EXPECT_EQ(j["grid"]["cols"], 3);
  ASSERT_EQ(j["cells"].size(), 6u);
  EXPECT_EQ(j["cells"][4]["score"], 0.25);
  EXPECT_EQ(j["cells"][4]["worker"], 2);
  EXPECT_EQ(j["workers"].size(), 2u);
}

TEST(StatusServer, MetricsAreThePrometheusText) {
  Served s;
  const auto a = http_get(s.port, "/metrics?debug=1");
  ASSERT_EQ(a.status, 200);
  EXPECT_NE(a.headers.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << a.headers;
  EXPECT_NE(a.body.find("cellgan_cell_score{cell=\"4\",worker=\"2\",objective=\"mode_tvd\"} 0.25\n"), std::string::npos)
      << a.body;
}

TEST(StatusServer, RootIsThePage) {
  Served s;
  const auto a = http_get(s.port, "/");
  ASSERT_EQ(a.status, 200);
  EXPECT_NE(a.headers.find("Content-Type: text/html"), std::string::npos);
  EXPECT_NE(a.body.find("<div id=\"grid\">"), std::string::npos);
  EXPECT_NE(a.body.find("fetch(\"/status\""), std::string::npos);
}

TEST(StatusServer, PreviewIsTheLatestPngOnceThereIsOne) {
  Served s;
  EXPECT_EQ(http_get(s.port, "/preview.png").status, 404);
  test::TempDir tmp;
  const std::string png = std::string("\x89PNG\r\n\x1a\n", 8) + std::string(3000, '\0') + "end";
  test::write_bytes(tmp.file("gen-000002.png"), png);
  s.board.preview(2, tmp.file("gen-000002.png"));
  const auto a = http_get(s.port, "/preview.png?generation=2");
  ASSERT_EQ(a.status, 200);
  EXPECT_NE(a.headers.find("Content-Type: image/png"), std::string::npos);
  EXPECT_EQ(a.body, png);
}

TEST(StatusServer, OtherPathsAre404AndOtherMethods405) {
  Served s;
  EXPECT_EQ(http_get(s.port, "/nothing").status, 404);
  EXPECT_EQ(http_get(s.port, "/status/").status, 404);
  EXPECT_EQ(http_get(s.port, "/../etc/passwd").status, 404);
  for (const char* method : {"POST", "PUT", "DELETE", "HEAD", "OPTIONS"}) {
    const auto a = http_request(s.port, method, "/status");
    EXPECT_EQ(a.status, 405) << method;
    EXPECT_NE(a.headers.find("Allow: GET"), std::string::npos) << method;
  }
}

TEST(StatusServer, MalformedRequestsAre400AndTheServerGoesOn) {
  Served s;
  for (const std::string& request : {std::string("GARBAGE\r\n\r\n"), std::string("GET /status HTTP/x.y\r\n\r\n"),
                                    std::string("GET\r\n\r\n"), std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc", 9),
                                    std::string("GET /status HTTP/1.1\r\nno colon here\r\n\r\n"),
                                    std::string("GET /status HTTP/1.1\r\nContent-Length: -5\r\n\r\n")}) {
    ClientSocket c(s.port);
    ASSERT_TRUE(c.send(request));
    c.close_sending();  // a request cut short is answered at its end
    const auto a = parse_answer(c.receive_all());
    EXPECT_EQ(a.status, 400) << request;
    expect_alive(s.port);
  }
}

TEST(StatusServer, OversizedHeadersAre431) {
  Served s;
  const std::string request =
      "GET /status HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(20 * 1024, 'a') + "\r\nConnection: close\r\n\r\n";
  EXPECT_EQ(http_exchange(s.port, request).status, 431);
  const std::string long_target = "GET /" + std::string(20 * 1024, 'b') + " HTTP/1.1\r\n\r\n";
  EXPECT_EQ(http_exchange(s.port, long_target).status, 431);
  expect_alive(s.port);
}

TEST(StatusServer, OversizedBodiesAre413) {
  Served s;
  // The length is declared: answered as soon as the header is read.
  ClientSocket c(s.port);
  ASSERT_TRUE(c.send("POST /status HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\n\r\n"));
  EXPECT_EQ(parse_answer(c.receive_all()).status, 413);
  // Chunked: the limit is met on the way.
  ClientSocket chunked(s.port);
  ASSERT_TRUE(chunked.send("POST /status HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n800\r\n" +
                           std::string(2048, 'c') + "\r\n"));
  EXPECT_EQ(parse_answer(chunked.receive_all()).status, 413);
  expect_alive(s.port);
}

TEST(StatusServer, AClientThatLeavesMidRequestCostsNothing) {
  Served s;
  for (int i = 0; i < 20; ++i) {
    ClientSocket c(s.port);
    ASSERT_TRUE(c.send("GET /sta"));
  }  // closed with the request half sent
  {
    ClientSocket c(s.port);
    ASSERT_TRUE(c.send("GET /status HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc"));
  }
  expect_alive(s.port);
}

TEST(StatusServer, AnIdleClientIsDroppedAfterTheReadTimeout) {
  StatusServerOptions options;
  options.read_timeout = milliseconds(200);
  Served s(options);
  ClientSocket c(s.port, milliseconds(5000));
  ASSERT_TRUE(c.send("GET /status HTTP/1.1\r\n"));  // and nothing more
  const auto before = std::chrono::steady_clock::now();
  EXPECT_EQ(c.receive_all(), "");
  EXPECT_TRUE(c.closed_by_server());
  EXPECT_LT(std::chrono::steady_clock::now() - before, milliseconds(3000));
  expect_alive(s.port);
}

TEST(StatusServer, AnswersPipelinedRequestsOnOneConnection) {
  Served s;
  ClientSocket c(s.port);
  ASSERT_TRUE(c.send("GET /status HTTP/1.1\r\nHost: x\r\n\r\nGET /nothing HTTP/1.1\r\nHost: x\r\n\r\n"
                     "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  const std::string all = c.receive_all();
  EXPECT_TRUE(c.closed_by_server());
  const auto first = all.find("HTTP/1.1 200"), second = all.find("HTTP/1.1 404"), third = all.rfind("HTTP/1.1 200");
  EXPECT_NE(first, std::string::npos);
  EXPECT_NE(second, std::string::npos);
  EXPECT_TRUE(first < second && second < third) << all.substr(0, 200);
  EXPECT_NE(all.find("cellgan_grid_rows 2"), std::string::npos);
}

TEST(StatusServer, IdleConnectionsAtTheLimitDoNotLockOutANormalClient) {
  StatusServerOptions options;
  options.max_connections = 4;
  options.read_timeout = milliseconds(30000);  // the idle ones are not dropped by the timeout
  Served s(options);
  std::vector<std::unique_ptr<ClientSocket>> idle;
  for (int i = 0; i < 4; ++i) {
    idle.push_back(std::make_unique<ClientSocket>(s.port, milliseconds(2000)));
    ASSERT_TRUE(idle.back()->send("GET /status HTTP/1.1\r\n"));  // held open, unfinished
  }
  std::this_thread::sleep_for(milliseconds(100));  // accepted by now
  for (int round = 0; round < 3; ++round) {
    const auto before = std::chrono::steady_clock::now();
    ClientSocket normal(s.port, milliseconds(2000));
    ASSERT_TRUE(normal.send("GET /status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
    EXPECT_EQ(parse_answer(normal.receive_all()).status, 200) << "round " << round;
    EXPECT_LT(std::chrono::steady_clock::now() - before, milliseconds(1000));
  }
  // The oldest idle connections made the room.
  EXPECT_EQ(idle.front()->receive_all(), "");
  EXPECT_TRUE(idle.front()->closed_by_server());
  idle.clear();
  std::this_thread::sleep_for(milliseconds(100));
  expect_alive(s.port);
}

TEST(StatusServer, StopsPromptlyWithClientsConnected) {
  Served s;
  ClientSocket idle(s.port);
  ASSERT_TRUE(idle.send("GET /sta"));
  const auto before = std::chrono::steady_clock::now();
  s.server.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - before, milliseconds(1000));
  EXPECT_EQ(idle.receive_all(), "");
  EXPECT_FALSE(ClientSocket(s.port).valid()) << "still listening after the destructor";
}

TEST(StatusServer, APortInUseIsAnErrorNamingIt) {
  Served s;
  StatusServerOptions options;
  options.port = s.port;
  try {
    StatusServer second(s.board, options);
    FAIL() << "a second server listens on the same port";
  } catch (const StatusServerError& e) {
    EXPECT_NE(std::string(e.what()).find(fmt::format("127.0.0.1:{}", s.port)), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("in use"), std::string::npos) << e.what();
  }
  options.port = 0;
  options.bind = "not-an-address";
  EXPECT_THROW(StatusServer(s.board, options), StatusServerError);
}

TEST(JobStatus, APortInUseIsBadInputNamingStatusPort) {
  Served s;
  Config config;
  config.source = "run.yaml";
  config.status.port = s.port;
  const std::string what = test::input_error_of([&] { start_status_server(config, s.board); });
  EXPECT_EQ(what.rfind(fmt::format("run.yaml: status.port: cannot serve the status on 127.0.0.1:{}", s.port), 0), 0u)
      << what;
  config.status.port = 0;
  EXPECT_EQ(start_status_server(config, s.board), nullptr) << "port 0 is off";
}

TEST(JobStatus, AnAddressThatIsNotAnIpIsBadInputNamingStatusBind) {
  Served s;
  Config config;
  config.source = "run.yaml";
  config.status.port = test::free_port();
  for (const char* bind : {"localhost", "", "1.2.3", "127.0.0.1:80", "http://x"}) {
    config.status.bind = bind;
    const std::string what = test::input_error_of([&] { start_status_server(config, s.board); });
    EXPECT_EQ(what.rfind(fmt::format("run.yaml: status.bind: '{}' is not an IP address", bind), 0), 0u) << what;
  }
  config.status.bind = "::1";  // IPv6 loopback, where the machine has it
  try {
    EXPECT_EQ(start_status_server(config, s.board)->url(), fmt::format("http://[::1]:{}/", config.status.port));
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("status.port"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cellgan

// A whole job (one process) with the status server on: /status and
// /metrics answer while it trains, with every cell and worker of the job;
// the server is gone when the job is; and a port already in use is bad
// input, found before anything is written.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <future>

#include "common/error.h"
#include "master/status_server.h"
#include "tests/app/job_files.h"
#include "tests/app/one_process_job.h"
#include "tests/common/test_files.h"
#include "tests/master/http_client.h"

namespace cellgan {
namespace {

using test::read_bytes;
using test::TempDir;

TEST(StatusServerJob, ServesEveryCellAndWorkerWhileTheRunTrains) {
  TempDir tmp;
  const int port = test::free_port();
  const std::string config = test::toy_config_with_status(tmp, tmp.file("run"), 60, port);
  auto job = std::async(std::launch::async, [&] { return test::run_one_process_job(config, 2); });
  std::vector<nlohmann::json> seen;  // every /status answer while it trained
  std::string metrics;
  while (job.wait_for(std::chrono::milliseconds(10)) != std::future_status::ready) {
    const auto a = test::http_get(port, "/status");
    if (a.status != 200) continue;
    auto j = nlohmann::json::parse(a.body);
    if (j["phase"] != "training") continue;
    if (metrics.empty()) metrics = test::http_get(port, "/metrics").body;
    seen.push_back(std::move(j));
  }
  const test::JobOutcome out = job.get();
  ASSERT_TRUE(out.result.has_value()) << out.master_error;
  ASSERT_GE(seen.size(), 3u) << "too few answers while the run trained";
  std::int64_t done = 0;
  for (const auto& j : seen) {
    EXPECT_EQ(j["grid"], nlohmann::json({{"rows", 2}, {"cols", 2}}));
    EXPECT_EQ(j["objective"], "mode_tvd");
    EXPECT_EQ(j["generations"]["total"], 60);
    EXPECT_GE(j["generations"]["done"].get<std::int64_t>(), done) << "generations went back";
    done = j["generations"]["done"];
    ASSERT_EQ(j["cells"].size(), 4u);
    for (int c = 0; c < 4; ++c) EXPECT_EQ(j["cells"][c]["worker"], c / 2 + 1);
    ASSERT_EQ(j["workers"].size(), 2u);
    for (const auto& w : j["workers"]) {
      EXPECT_TRUE(w["state"] == "starting" || w["state"] == "processing" || w["state"] == "finished") << w;
      EXPECT_LT(w["heartbeat_age_seconds"].get<double>(), 5.0) << w;
    }
    bool assigned = false;
    for (const auto& e : j["events"]) assigned |= e["line"].get<std::string>().rfind("assign: ", 0) == 0;
    EXPECT_TRUE(assigned) << "the events.log lines";
  }
  EXPECT_GT(done, 0) << "never saw a generation done";
  const auto& last = seen.back();
  for (const auto& c : last["cells"]) {
    if (c["generation"].get<int>() > 0) {
      EXPECT_TRUE(c["score"].is_number()) << c;
    }
  }
  EXPECT_NE(metrics.find("cellgan_cell_generation{cell=\"3\",worker=\"2\"}"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("cellgan_worker_heartbeat_age_seconds{worker=\"1\"}"), std::string::npos) << metrics;
  EXPECT_FALSE(test::ClientSocket(port).valid()) << "still serving after the run";
}

TEST(StatusServerJob, APortInUseIsBadInputBeforeAnythingIsWritten) {
  TempDir tmp;
  // Something else listens on the port.
  StatusBoard other(1, 1, "coevolution", "fid", 1, 0, {0}, StatusBoard::Clock::now());
  StatusServer taken(other, StatusServerOptions{});
  const std::string dir = tmp.file("run");
  const auto out = test::run_one_process_job(test::toy_config_with_status(tmp, dir, 4, taken.port()), 2);
  EXPECT_FALSE(out.result.has_value());
  EXPECT_NE(out.master_error.find(fmt::format("status.port: cannot serve the status on 127.0.0.1:{}", taken.port())),
            std::string::npos)
      << out.master_error;
  EXPECT_EQ(out.worker_codes, std::vector<int>(2, kExitBadInput));
  EXPECT_FALSE(std::filesystem::exists(dir)) << "the run directory was created";
}

}  // namespace
}  // namespace cellgan

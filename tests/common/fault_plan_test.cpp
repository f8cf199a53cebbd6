// Tests of common/fault_plan.h: the --fault mini-syntax and the `faults:`
// list of the configuration, every bad case as one InputError line naming
// the flag or the file and key, the checks against the run, the YAML round
// trip, and the queries the injectors ask.
#include "common/fault_plan.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "common/config.h"
#include "common/error.h"

namespace cellgan {
namespace {

// The message of the InputError `f` throws, or "" when it throws none.
template <typename F>
std::string input_error(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

Config run_of(std::int64_t rows, std::int64_t cols, std::int64_t generations) {
  Config c;
  c.grid.rows = rows;
  c.grid.cols = cols;
  c.training.generations = generations;
  return c;
}

TEST(FaultOption, ParsesEveryKind) {
  const Fault kill = parse_fault_option("kill:rank=2,gen=3");
  EXPECT_EQ(kill.kind, FaultKind::kKill);
  EXPECT_EQ(kill.rank, 2);
  EXPECT_EQ(kill.gen, 3);

  const Fault stall = parse_fault_option("stall:gen=4,seconds=2,rank=1");  // any order
  EXPECT_EQ(stall.kind, FaultKind::kStall);
  EXPECT_EQ(stall.rank, 1);
  EXPECT_EQ(stall.gen, 4);
  EXPECT_EQ(stall.seconds, 2);

  const Fault nan = parse_fault_option("nan:cell=0,gen=2");
  EXPECT_EQ(nan.kind, FaultKind::kNan);
  EXPECT_EQ(nan.cell, 0);
  EXPECT_EQ(nan.gen, 2);
  EXPECT_EQ(nan.rank, 0);

  const Fault delay = parse_fault_option("delay:rank=3,ms=50");
  EXPECT_EQ(delay.kind, FaultKind::kDelay);
  EXPECT_EQ(delay.gen, 1);  // from the first generation by default
  EXPECT_EQ(delay.ms, 50);

  const Fault whole = parse_fault_option("corrupt-checkpoint:gen=5");
  EXPECT_EQ(whole.kind, FaultKind::kCorruptCheckpoint);
  EXPECT_EQ(whole.gen, 5);
  EXPECT_EQ(whole.cell, -1);  // every cell
  EXPECT_EQ(parse_fault_option("corrupt-checkpoint:gen=5,cell=2").cell, 2);

  const Fault silent = parse_fault_option("drop-heartbeats:rank=2,gen=1");
  EXPECT_EQ(silent.kind, FaultKind::kDropHeartbeats);
  EXPECT_EQ(silent.rank, 2);
}

TEST(FaultOption, TextRoundTrip) {
  for (const char* text : {"kill:rank=2,gen=3", "stall:rank=1,gen=4,seconds=2", "nan:cell=0,gen=2",
                           "delay:rank=3,gen=1,ms=50", "corrupt-checkpoint:gen=5", "corrupt-checkpoint:gen=5,cell=2",
                           "drop-heartbeats:rank=2,gen=1"}) {
    EXPECT_EQ(to_text(parse_fault_option(text)), text);
  }
}

TEST(FaultOption, EveryBadCaseIsOneLineNamingTheOptionAndWhatWasExpected) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "--fault '': expected KIND:PARAM=VALUE"},
      {"boom:rank=1,gen=1", "--fault 'boom:rank=1,gen=1': unknown kind 'boom': expected one of kill, stall, nan, "
                            "delay, corrupt-checkpoint, drop-heartbeats"},
      {"kill", "--fault 'kill': missing rank: expected kill:rank=R,gen=G"},
      {"kill:", "--fault 'kill:': '' is not PARAM=VALUE: expected kill:rank=R,gen=G"},
      {"kill:rank=2", "--fault 'kill:rank=2': missing gen: expected kill:rank=R,gen=G"},
      {"kill:rank=2,gen=3,", "is not PARAM=VALUE"},
      {"kill:rank2,gen=3", "--fault 'kill:rank2,gen=3': 'rank2' is not PARAM=VALUE"},
      {"kill:=2,gen=3", "'=2' is not PARAM=VALUE"},
      {"kill:rank=two,gen=3", "--fault 'kill:rank=two,gen=3': rank: expected an integer, got 'two'"},
      {"kill:rank=,gen=3", "rank: expected an integer, got ''"},
      {"kill:rank=2.5,gen=3", "rank: expected an integer, got '2.5'"},
      {"kill:rank=99999999999999999999,gen=3", "rank: expected an integer"},
      {"kill:rank=2,gen=3,cell=1", "kill takes no parameter 'cell': expected kill:rank=R,gen=G"},
      {"kill:rank=2,gen=3,colour=red", "kill takes no parameter 'colour'"},
      {"kill:rank=2,rank=3,gen=3", "'rank' is given twice"},
      {"kill:rank=0,gen=3", "rank: 0 is out of range: expected >= 1"},
      {"kill:rank=2,gen=0", "gen: 0 is out of range: expected >= 1"},
      {"nan:cell=-1,gen=2", "cell: -1 is out of range: expected >= 0"},
      {"nan:gen=2", "missing cell: expected nan:cell=C,gen=G"},
      {"stall:rank=1,gen=1", "missing seconds: expected stall:rank=R,gen=G,seconds=S"},
      {"stall:rank=1,gen=1,seconds=0", "seconds: 0 is out of range: expected 1..86400"},
      {"delay:rank=1", "missing ms: expected delay:rank=R[,gen=G],ms=M"},
      {"delay:rank=1,ms=-5", "ms: -5 is out of range"},
      {"corrupt-checkpoint:cell=1", "missing gen: expected corrupt-checkpoint:gen=G[,cell=C]"},
      {"drop-heartbeats:gen=2", "missing rank: expected drop-heartbeats:rank=R,gen=G"},
  };
  for (const auto& [text, expected] : cases) {
    SCOPED_TRACE(text);
    const std::string message = input_error([&] { parse_fault_option(text); });
    EXPECT_NE(message.find(expected), std::string::npos) << message;
    EXPECT_EQ(message.rfind("--fault '" + text + "': ", 0), 0u) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(FaultMisfit, RankCellAndGenerationMustFitTheRun) {
  const Config run = run_of(2, 3, 10);  // cells 0..5
  EXPECT_FALSE(fault_misfit(parse_fault_option("kill:rank=2,gen=10"), run, 2));
  EXPECT_FALSE(fault_misfit(parse_fault_option("nan:cell=5,gen=1"), run, 2));
  EXPECT_FALSE(fault_misfit(parse_fault_option("kill:rank=7,gen=1"), run, 0)) << "workers unknown: rank unchecked";

  const auto rank = fault_misfit(parse_fault_option("kill:rank=3,gen=1"), run, 2);
  ASSERT_TRUE(rank);
  EXPECT_EQ(rank->param, "rank");
  EXPECT_EQ(rank->what, "3 is out of range: expected 1..2 (the worker ranks)");

  const auto cell = fault_misfit(parse_fault_option("nan:cell=6,gen=1"), run, 2);
  ASSERT_TRUE(cell);
  EXPECT_EQ(cell->param, "cell");
  EXPECT_EQ(cell->what, "6 is out of range: expected 0..5 (the cells of the 2x3 grid)");
  ASSERT_TRUE(fault_misfit(parse_fault_option("corrupt-checkpoint:gen=2,cell=9"), run, 2));

  const auto gen = fault_misfit(parse_fault_option("stall:rank=1,gen=11,seconds=1"), run, 2);
  ASSERT_TRUE(gen);
  EXPECT_EQ(gen->param, "gen");
  EXPECT_EQ(gen->what, "11 is out of range: expected 1..10 (training.generations)");
  EXPECT_TRUE(fault_misfit(parse_fault_option("delay:rank=1,gen=11,ms=1"), run, 2));
}

// --------------------------------------------------------- the configuration

constexpr const char* kRun = "grid: {rows: 2, cols: 2}\ntraining: {generations: 5}\n";

TEST(FaultConfig, NoFaultsByDefault) {
  EXPECT_TRUE(Config{}.faults.empty());
  EXPECT_TRUE(parse_config(kRun, "run.yaml").faults.empty());
  EXPECT_TRUE(parse_config(std::string(kRun) + "faults: []\n", "run.yaml").faults.empty());
  EXPECT_TRUE(parse_config(std::string(kRun) + "faults:\n", "run.yaml").faults.empty());
}

TEST(FaultConfig, ReadsAListOfMappings) {
  const Config c = parse_config(std::string(kRun) +
                                    "faults:\n"
                                    "  - {kind: kill, rank: 2, gen: 3}\n"
                                    "  - kind: nan\n"
                                    "    cell: 3\n"
                                    "    gen: 5\n"
                                    "  - {kind: delay, rank: 1, ms: 20}\n"
                                    "  - {kind: corrupt-checkpoint, gen: 2}\n",
                                "run.yaml");
  ASSERT_EQ(c.faults.size(), 4u);
  EXPECT_EQ(c.faults[0], parse_fault_option("kill:rank=2,gen=3"));
  EXPECT_EQ(c.faults[1], parse_fault_option("nan:cell=3,gen=5"));
  EXPECT_EQ(c.faults[2], parse_fault_option("delay:rank=1,gen=1,ms=20"));
  EXPECT_EQ(c.faults[3], parse_fault_option("corrupt-checkpoint:gen=2"));
}

TEST(FaultConfig, EveryBadCaseNamesTheFileAndTheKey) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"faults: {kind: kill}", "run.yaml: faults: expected a list of faults"},
      {"faults: kill", "run.yaml: faults: expected a list of faults"},
      {"faults: [\"kill:rank=2\"]", "run.yaml: faults[0]: expected a mapping of `kind`"},
      {"faults: [{rank: 2, gen: 3}]", "run.yaml: faults[0].kind: missing: expected one of kill, stall"},
      {"faults: [{kind: [kill]}]", "run.yaml: faults[0].kind: expected one of kill, stall"},
      {"faults: [{kind: boom}]", "run.yaml: faults[0].kind: 'boom' is not one of kill, stall, nan, delay, "
                                 "corrupt-checkpoint, drop-heartbeats"},
      {"faults: [{kind: kill, rank: 2, gen: 3}, {kind: kill, rank: 1}]",
       "run.yaml: faults[1]: missing gen: expected kill:rank=R,gen=G"},
      {"faults: [{kind: kill, rank: 2, gen: 3, cell: 1}]", "run.yaml: faults[0].cell: unknown key: kill takes"},
      {"faults: [{kind: kill, rank: two, gen: 3}]", "run.yaml: faults[0].rank: expected an integer, got 'two'"},
      {"faults: [{kind: kill, rank: 1.5, gen: 3}]", "run.yaml: faults[0].rank: expected an integer, got '1.5'"},
      {"faults: [{kind: kill, rank: [1], gen: 3}]", "run.yaml: faults[0].rank: expected an integer"},
      {"faults: [{kind: kill, rank: 0, gen: 3}]", "run.yaml: faults[0].rank: 0 is out of range: expected >= 1"},
      {"faults: [{kind: kill, rank: 1, rank: 2, gen: 3}]", "run.yaml: faults[0].rank: duplicate key"},
      {"faults: [{kind: stall, rank: 1, gen: 3, seconds: 0}]", "faults[0].seconds: 0 is out of range"},
      {"faults: [{kind: nan, cell: 4, gen: 1}]",
       "run.yaml: faults[0].cell: 4 is out of range: expected 0..3 (the cells of the 2x2 grid)"},
      {"faults: [{kind: kill, rank: 1, gen: 6}]",
       "run.yaml: faults[0].gen: 6 is out of range: expected 1..5 (training.generations)"},
      {"faults: [{kind: delay, rank: 1, gen: 9, ms: 5}]", "run.yaml: faults[0].gen: 9 is out of range"},
  };
  for (const auto& [yaml, expected] : cases) {
    SCOPED_TRACE(yaml);
    const std::string message = input_error([&] { parse_config(std::string(kRun) + yaml + "\n", "run.yaml"); });
    EXPECT_NE(message.find(expected), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(FaultConfig, TheResolvedConfigurationKeepsTheFaults) {
  Config c = parse_config(kRun, "run.yaml");
  c.faults = {parse_fault_option("kill:rank=2,gen=3"), parse_fault_option("stall:rank=1,gen=2,seconds=4"),
              parse_fault_option("corrupt-checkpoint:gen=5"), parse_fault_option("corrupt-checkpoint:gen=1,cell=3"),
              parse_fault_option("drop-heartbeats:rank=1,gen=4"), parse_fault_option("delay:rank=1,gen=2,ms=7"),
              parse_fault_option("nan:cell=0,gen=1")};
  const std::string yaml = to_yaml(c);
  EXPECT_NE(yaml.find("faults:"), std::string::npos) << yaml;
  const Config back = parse_config(yaml, "resolved.yaml");
  EXPECT_EQ(back.faults, c.faults) << yaml;
  EXPECT_TRUE(same_config(c, back));
  EXPECT_NE(to_yaml(Config{}).find("faults: []"), std::string::npos);
}

TEST(FaultConfig, DifferencesNameTheFaults) {
  const Config a = parse_config(kRun, "a.yaml");
  Config b = a;
  b.faults.push_back(parse_fault_option("kill:rank=2,gen=3"));
  EXPECT_EQ(config_differences(a, b), std::vector<std::string>{"faults: none vs kill:rank=2,gen=3"});
  EXPECT_FALSE(same_config(a, b));
}

// -------------------------------------------------------------- the queries

TEST(FaultPlan, AnswersByRankCellAndGeneration) {
  const FaultPlan plan({parse_fault_option("kill:rank=2,gen=3"), parse_fault_option("stall:rank=1,gen=3,seconds=2"),
                        parse_fault_option("drop-heartbeats:rank=1,gen=3"), parse_fault_option("delay:rank=1,gen=2,ms=5"),
                        parse_fault_option("delay:rank=1,gen=4,ms=10"), parse_fault_option("nan:cell=3,gen=2"),
                        parse_fault_option("corrupt-checkpoint:gen=4,cell=1"),
                        parse_fault_option("corrupt-checkpoint:gen=6")});
  EXPECT_TRUE(plan.at_generation_start(2, 2).empty());
  ASSERT_EQ(plan.at_generation_start(2, 3).size(), 1u);
  EXPECT_EQ(plan.at_generation_start(2, 3)[0].kind, FaultKind::kKill);
  const auto rank1 = plan.at_generation_start(1, 3);
  ASSERT_EQ(rank1.size(), 2u);
  EXPECT_EQ(rank1[0].kind, FaultKind::kStall);
  EXPECT_EQ(rank1[1].kind, FaultKind::kDropHeartbeats);
  EXPECT_TRUE(plan.at_generation_start(1, 4).empty()) << "faults strike at their generation only";

  EXPECT_EQ(plan.batch_delay_ms(1, 1), 0);
  EXPECT_EQ(plan.batch_delay_ms(1, 2), 5);
  EXPECT_EQ(plan.batch_delay_ms(1, 3), 5);
  EXPECT_EQ(plan.batch_delay_ms(1, 9), 15);
  EXPECT_EQ(plan.batch_delay_ms(2, 9), 0);
  EXPECT_TRUE(plan.delay_starts(1, 2));
  EXPECT_FALSE(plan.delay_starts(1, 3));

  EXPECT_TRUE(plan.poisons(3, 2));
  EXPECT_FALSE(plan.poisons(3, 3));
  EXPECT_FALSE(plan.poisons(2, 2));

  EXPECT_TRUE(plan.corrupts_checkpoint(4, 1));
  EXPECT_FALSE(plan.corrupts_checkpoint(4, 0));
  EXPECT_TRUE(plan.corrupts_checkpoint(6, 0));
  EXPECT_TRUE(plan.corrupts_checkpoint(6, 3));
  EXPECT_FALSE(plan.corrupts_checkpoint(5, 1));
  ASSERT_EQ(plan.checkpoint_corruptions(6).size(), 1u);
  EXPECT_EQ(plan.checkpoint_corruptions(6)[0].cell, -1);
}

TEST(FaultPlan, DescribesEachFaultForTheEventsLog) {
  EXPECT_EQ(describe(parse_fault_option("kill:rank=2,gen=3")), "kill worker rank 2 at the start of generation 3");
  EXPECT_EQ(describe(parse_fault_option("nan:cell=1,gen=2")),
            "nan in the generators of cell 1 at the start of generation 2");
  EXPECT_EQ(describe(parse_fault_option("drop-heartbeats:rank=2,gen=3")),
            "drop the heartbeats of worker rank 2 from generation 3");
}

}  // namespace
}  // namespace cellgan

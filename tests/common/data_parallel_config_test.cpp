// The data_parallel section and the rules of layout data_parallel: good
// options are read, and each bad one is rejected with one line naming the
// file, the key and what was expected.
#include <gtest/gtest.h>

#include <string>

#include "common/config.h"
#include "common/error.h"
#include "tests/common/test_files.h"

namespace cellgan {
namespace {

using test::input_error_of;

const std::string kBase = "layout: data_parallel\ngrid: {rows: 1, cols: 1}\n";

std::string error_of(const std::string& yaml) {
  return input_error_of([&] { parse_config(yaml, "configs/dp.yaml"); });
}

void expect_one_line_naming(const std::string& message, const std::string& key, const std::string& expected) {
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_EQ(message.rfind("configs/dp.yaml: " + key + ": ", 0), 0u) << message;
  EXPECT_NE(message.find(expected), std::string::npos) << message;
}

TEST(DataParallelConfig, EveryOptionIsRead) {
  const Config c = parse_config(kBase +
                                    "data_parallel: {allreduce: reduce_broadcast, fusion_bytes: 0, compression: bf16, "
                                    "accumulate_steps: 4, clip_grad_norm: 2.5, scaling: strong}\n",
                                "dp.yaml");
  EXPECT_EQ(c.layout, LayoutKind::kDataParallel);
  EXPECT_EQ(c.data_parallel.allreduce, AllreduceKind::kReduceBroadcast);
  EXPECT_EQ(c.data_parallel.fusion_bytes, 0);
  EXPECT_EQ(c.data_parallel.compression, WireCompression::kBf16);
  EXPECT_EQ(c.data_parallel.accumulate_steps, 4);
  EXPECT_EQ(c.data_parallel.clip_grad_norm, 2.5);
  EXPECT_EQ(c.data_parallel.scaling, BatchScaling::kStrong);
}

TEST(DataParallelConfig, BadOptionsAreOneLineNamingTheKey) {
  expect_one_line_naming(error_of(kBase + "data_parallel: {allreduce: tree}\n"), "data_parallel.allreduce",
                         "'tree' is not one of ring, reduce_broadcast, mpi, nccl");
  expect_one_line_naming(error_of(kBase + "data_parallel: {fusion_bytes: -1}\n"), "data_parallel.fusion_bytes",
                         "out of range");
  expect_one_line_naming(error_of(kBase + "data_parallel: {compression: int8}\n"), "data_parallel.compression",
                         "not one of none, fp16, bf16");
  expect_one_line_naming(error_of(kBase + "data_parallel: {accumulate_steps: 0}\n"),
                         "data_parallel.accumulate_steps", "out of range");
  expect_one_line_naming(error_of(kBase + "data_parallel: {clip_grad_norm: -0.5}\n"), "data_parallel.clip_grad_norm",
                         "out of range");
  expect_one_line_naming(error_of(kBase + "data_parallel: {scaling: linear}\n"), "data_parallel.scaling",
                         "not one of weak, strong");
  expect_one_line_naming(error_of(kBase + "data_parallel: {allreduce: mpi, compression: fp16}\n"),
                         "data_parallel.compression",
                         "needs allreduce ring or reduce_broadcast, or mpi or nccl with hierarchy two_level");
  expect_one_line_naming(error_of(kBase + "data_parallel: {allreduce: mpi, compression: bf16, hierarchy: auto}\n"),
                         "data_parallel.compression", "MPI_Iallreduce sums float32 only here");
  expect_one_line_naming(error_of(kBase + "data_parallel: {allreduce: nccl, compression: bf16}\n"),
                         "data_parallel.compression", "ncclAllReduce sums float32 only here");
  expect_one_line_naming(error_of(kBase + "data_parallel: {allreduce: nccl, across_nodes: nccl}\n"),
                         "data_parallel.across_nodes", "'nccl' is not one of ring, reduce_broadcast, mpi");
  expect_one_line_naming(error_of(kBase + "data_parallel: {ring: 1}\n"), "data_parallel.ring", "");
}

// two_level takes every all-reduce; mpi and nccl take compression with
// two_level alone (mpi's inside nodes, nccl's across them).
TEST(DataParallelConfig, TwoLevelTakesEveryAllreduceWithOrWithoutCompression) {
  for (const char* options : {"{allreduce: mpi, hierarchy: two_level}",
                              "{allreduce: nccl, hierarchy: two_level, across_nodes: mpi, compression: bf16}",
                              "{allreduce: nccl, hierarchy: two_level}",
                              "{allreduce: mpi, hierarchy: two_level, compression: fp16, ranks_per_node: 2}",
                              "{allreduce: ring, hierarchy: two_level, compression: bf16}",
                              "{allreduce: reduce_broadcast, hierarchy: two_level}", "{allreduce: mpi, hierarchy: auto}"}) {
    SCOPED_TRACE(options);
    Config c;
    ASSERT_NO_THROW(c = parse_config(kBase + "data_parallel: " + options + "\n", "configs/dp.yaml"));
    EXPECT_NE(c.data_parallel.hierarchy, AllreduceHierarchy::kFlat);
  }
  const Config c = parse_config(kBase + "data_parallel: {allreduce: mpi, hierarchy: two_level, compression: bf16}\n",
                                "configs/dp.yaml");
  EXPECT_EQ(c.data_parallel.allreduce, AllreduceKind::kMpi);
  EXPECT_EQ(c.data_parallel.hierarchy, AllreduceHierarchy::kTwoLevel);
  EXPECT_EQ(c.data_parallel.compression, WireCompression::kBf16);
  EXPECT_EQ(c.data_parallel.across_nodes, AllreduceKind::kRing);  // the default
  const Config n = parse_config(kBase + "data_parallel: {allreduce: nccl, hierarchy: two_level, across_nodes: "
                                        "reduce_broadcast}\n",
                                "configs/dp.yaml");
  EXPECT_EQ(n.data_parallel.across_nodes, AllreduceKind::kReduceBroadcast);
}

TEST(DataParallelConfig, NcclIsAnAllreduceOfItsOwn) {
  const Config c = parse_config(kBase + "data_parallel: {allreduce: nccl, hierarchy: auto}\n", "configs/dp.yaml");
  EXPECT_EQ(c.data_parallel.allreduce, AllreduceKind::kNccl);
  EXPECT_STREQ(to_string(c.data_parallel.allreduce), "nccl");
}

TEST(DataParallelConfig, TheLayoutNeedsOnePairAndOneLoss) {
  expect_one_line_naming(error_of("layout: data_parallel\ngrid: {rows: 2, cols: 2}\n"), "grid",
                         "expected rows 1 and cols 1");
  expect_one_line_naming(error_of(kBase + "training: {loss: mustangs}\n"), "training.loss",
                         "expected bce, mse, heuristic or wgan_gp");
  expect_one_line_naming(error_of(kBase + "network: {kind: dcgan_conditional}\n"), "network.kind",
                         "expected mlp, dcgan, sngan or toy");
  // Coevolution ignores the section, and keeps its grid.
  EXPECT_NO_THROW(parse_config("data_parallel: {allreduce: mpi}\n", "coevolution.yaml"));
}

}  // namespace
}  // namespace cellgan

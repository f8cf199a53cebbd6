// Tests of common/comm/protocol.h: encode/decode round trips of every message and errors on truncated payloads.
#include "common/comm/protocol.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "common/error.h"

namespace cellgan {
namespace {

Bytes pattern(std::size_t n, std::uint8_t seed) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(seed + i * 31);
  return b;
}

// Every proper prefix of `full` (including the empty payload) must throw an
// InputError that says it is truncated and names the message.
void expect_prefixes_rejected(const Bytes& full, const std::function<void(const Bytes&)>& decode,
                              const std::string& what) {
  ASSERT_FALSE(full.empty());
  for (std::size_t n = 0; n < full.size(); ++n) {
    const Bytes prefix(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    try {
      decode(prefix);
      ADD_FAILURE() << what << ": a prefix of " << n << " of " << full.size() << " bytes decoded without error";
    } catch (const InputError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("truncated"), std::string::npos) << message;
      EXPECT_NE(message.find(what), std::string::npos) << message;
    } catch (const std::exception& e) {
      ADD_FAILURE() << what << ": prefix of " << n << " bytes threw a non-InputError: " << e.what();
    }
  }
  EXPECT_NO_THROW(decode(full));
}

// ---------------------------------------------------------------- StartMessage

TEST(Protocol, StartRoundTrip) {
  StartMessage ok;
  ok.ok = true;
  ok.config_yaml = "seed: 1\ngrid:\n  rows: 2\n";
  ok.config_source = "configs/mnist-2x2.yaml";
  const StartMessage a = decode_start(encode(ok));
  EXPECT_TRUE(a.ok);
  EXPECT_EQ(a.error, "");
  EXPECT_EQ(a.config_yaml, ok.config_yaml);
  EXPECT_EQ(a.config_source, ok.config_source);

  StartMessage bad;
  bad.ok = false;
  bad.error = "configs/x.yaml: training.loss: 'hinge' is not one of bce, heuristic, mse, mustangs";
  bad.config_source = std::string("with\0nul", 8);
  const StartMessage b = decode_start(encode(bad));
  EXPECT_FALSE(b.ok);
  EXPECT_EQ(b.error, bad.error);
  EXPECT_EQ(b.config_yaml, "");
  EXPECT_EQ(b.config_source, bad.config_source);
  EXPECT_EQ(b.config_source.size(), 8u);
}

TEST(Protocol, StartTruncated) {
  StartMessage m;
  m.ok = false;
  m.error = "err";
  m.config_yaml = "a: 1";
  m.config_source = "src";
  expect_prefixes_rejected(encode(m), [](const Bytes& b) { decode_start(b); }, "start message");
}

// ---------------------------------------------------------------- HeartbeatMessage

TEST(Protocol, HeartbeatRoundTrip) {
  for (WorkerState state :
       {WorkerState::kInactive, WorkerState::kProcessing, WorkerState::kFinished, WorkerState::kFailed}) {
    for (std::int64_t generation : {std::int64_t{0}, std::int64_t{7}, std::numeric_limits<std::int64_t>::max()}) {
      HeartbeatMessage m;
      m.state = state;
      m.generation = generation;
      const HeartbeatMessage back = decode_heartbeat(encode(m));
      EXPECT_EQ(back.state, state) << to_string(state);
      EXPECT_EQ(back.generation, generation);
    }
  }
}

TEST(Protocol, HeartbeatTruncated) {
  HeartbeatMessage m;
  m.state = WorkerState::kProcessing;
  m.generation = 12;
  expect_prefixes_rejected(encode(m), [](const Bytes& b) { decode_heartbeat(b); }, "heartbeat");
}

TEST(Protocol, WorkerStateNames) {
  EXPECT_STREQ(to_string(WorkerState::kInactive), "inactive");
  EXPECT_STREQ(to_string(WorkerState::kProcessing), "processing");
  EXPECT_STREQ(to_string(WorkerState::kFinished), "finished");
  EXPECT_STREQ(to_string(WorkerState::kFailed), "failed");
}

// ---------------------------------------------------------------- HaloMessage

TEST(Protocol, HaloRoundTrip) {
  HaloMessage m;
  m.generation = 41;
  m.cell = 15;
  m.generator = pattern(1000, 3);
  m.discriminator = pattern(517, 200);
  const HaloMessage back = decode_halo(encode(m));
  EXPECT_EQ(back.generation, 41);
  EXPECT_EQ(back.cell, 15);
  EXPECT_EQ(back.generator, m.generator);
  EXPECT_EQ(back.discriminator, m.discriminator);

  HaloMessage empty;
  empty.generation = -1;
  empty.cell = std::numeric_limits<std::int32_t>::max();
  const HaloMessage e = decode_halo(encode(empty));
  EXPECT_EQ(e.generation, -1);
  EXPECT_EQ(e.cell, std::numeric_limits<std::int32_t>::max());
  EXPECT_TRUE(e.generator.empty());
  EXPECT_TRUE(e.discriminator.empty());
}

TEST(Protocol, HaloTruncated) {
  HaloMessage m;
  m.generation = 2;
  m.cell = 3;
  m.generator = pattern(9, 1);
  m.discriminator = pattern(5, 2);
  expect_prefixes_rejected(encode(m), [](const Bytes& b) { decode_halo(b); }, "halo message");
}

// ---------------------------------------------------------------- RecordsMessage

GenerationRecord full_record(int cell) {
  GenerationRecord g;
  g.cell = cell;
  g.generation = 3;
  g.generator_loss = 0.6931471805599453;
  g.discriminator_loss = -1.0 / 3.0;
  g.scores = {{"fid", 123.456789012345}, {"tvd", 0.25}};
  g.generator_lrs = {2e-4, 1.9999e-4};
  g.discriminator_lrs = {2.0001e-4};
  g.mixture_weights = {0.2, 0.3, 0.5};
  g.generators_replaced = 1;
  g.discriminators_replaced = 2;
  g.mixture_improved = true;
  g.preview = {0.5f, -1.0f, 0.25f, 1.0f};
  g.seconds = {{"train", 1.5}, {"idle", 0.0}};
  g.events = {"cell 2, generation 3: fault nan: the cell's generators poisoned (NaN weights)", ""};
  return g;
}

void expect_same_record(const GenerationRecord& a, const GenerationRecord& b) {
  EXPECT_EQ(a.cell, b.cell);
  EXPECT_EQ(a.generation, b.generation);
  EXPECT_EQ(a.generator_loss, b.generator_loss);  // bit for bit: doubles travel raw
  EXPECT_EQ(a.discriminator_loss, b.discriminator_loss);
  EXPECT_EQ(a.scores, b.scores);
  EXPECT_EQ(a.generator_lrs, b.generator_lrs);
  EXPECT_EQ(a.discriminator_lrs, b.discriminator_lrs);
  EXPECT_EQ(a.mixture_weights, b.mixture_weights);
  EXPECT_EQ(a.generators_replaced, b.generators_replaced);
  EXPECT_EQ(a.discriminators_replaced, b.discriminators_replaced);
  EXPECT_EQ(a.mixture_improved, b.mixture_improved);
  EXPECT_EQ(a.preview, b.preview);
  EXPECT_EQ(a.seconds, b.seconds);
  EXPECT_EQ(a.events, b.events);
}

TEST(Protocol, RecordsRoundTripTyped) {
  RecordsMessage m;
  m.generation = 3;
  m.records = {full_record(0), full_record(7)};
  m.records[1].preview.clear();
  m.records[1].mixture_improved = false;
  m.records[1].events.clear();
  const RecordsMessage back = decode_records(encode(m));
  EXPECT_EQ(back.generation, 3);
  ASSERT_EQ(back.records.size(), 2u);
  expect_same_record(back.records[0], m.records[0]);
  expect_same_record(back.records[1], m.records[1]);

  const RecordsMessage none = decode_records(encode(RecordsMessage{}));
  EXPECT_EQ(none.generation, 0);
  EXPECT_TRUE(none.records.empty());
  EXPECT_TRUE(none.events.empty());

  RecordsMessage own;  // a worker with no cell to report still reports its events
  own.generation = 2;
  own.events = {"fault delay: worker rank 2 slowed", ""};
  const RecordsMessage own_back = decode_records(encode(own));
  EXPECT_TRUE(own_back.records.empty());
  EXPECT_EQ(own_back.events, own.events);
}

TEST(Protocol, RecordsTruncated) {
  RecordsMessage m;
  m.generation = 1;
  m.records = {full_record(2)};
  expect_prefixes_rejected(encode(m), [](const Bytes& b) { decode_records(b); }, "records message");
}

// ---------------------------------------------------------------- Hello, failure, abort

TEST(Protocol, HelloFailureAndAbortRoundTrip) {
  EXPECT_EQ(decode_hello(encode(HelloMessage{"OpenBLAS SkylakeX", "cpu"})).blas_kernels, "OpenBLAS SkylakeX");
  EXPECT_EQ(decode_failure(encode(FailureMessage{"cell 3: weights not finite"})).reason,
            "cell 3: weights not finite");
  EXPECT_EQ(decode_failure(encode(FailureMessage{"cell 3: weights not finite"})).exit_code, 1);
  // A full disk travels as such: the run ends with 74, which is not restarted.
  EXPECT_EQ(decode_failure(encode(FailureMessage{"x: no space left on the device", 74})).exit_code, 74);
  expect_prefixes_rejected(encode(FailureMessage{"x", 74}), [](const Bytes& b) { decode_failure(b); },
                           "failure message");
  const AbortMessage a = decode_abort(encode(AbortMessage{2, "bad input on rank 0"}));
  EXPECT_EQ(a.exit_code, 2);
  EXPECT_EQ(a.reason, "bad input on rank 0");
  expect_prefixes_rejected(encode(AbortMessage{1, "x"}), [](const Bytes& b) { decode_abort(b); }, "abort message");
}

// ---------------------------------------------------------------- Identity, members, checkpoints, stops

TEST(Protocol, RecoveryMessagesRoundTrip) {
  const IdentityMessage id = decode_identity(encode(IdentityMessage{4242, "node-7"}));
  EXPECT_EQ(id.pid, 4242);
  EXPECT_EQ(id.host, "node-7");
  const MembersMessage m = decode_members(encode(MembersMessage{{1, 3, 4}, 10, "run/checkpoints/gen-000010", 1102}),
                                          "rehome message");
  EXPECT_EQ(m.members, (std::vector<std::int32_t>{1, 3, 4}));
  EXPECT_EQ(m.generation, 10);
  EXPECT_EQ(m.folder, "run/checkpoints/gen-000010");
  EXPECT_EQ(m.local_tag, 1102);
  CheckpointMessage c{6, {{2, "cell-0002.bin", 123, 0xdeadbeef}, {5, "cell-0005.bin", 0, 7}}, 0.25, {"flipped"}};
  const CheckpointMessage back = decode_checkpoint(encode(c));
  EXPECT_EQ(back.generation, 6);
  ASSERT_EQ(back.files.size(), 2u);
  EXPECT_EQ(back.files[0].name, "cell-0002.bin");
  EXPECT_EQ(back.files[0].bytes, 123u);
  EXPECT_EQ(back.files[0].crc32, 0xdeadbeefu);
  EXPECT_EQ(back.files[1].cell, 5);
  EXPECT_EQ(back.seconds, 0.25);
  EXPECT_EQ(back.events, std::vector<std::string>{"flipped"});
  EXPECT_EQ(decode_generation(encode(GenerationMessage{17}), "stop message").generation, 17);
  StartMessage start{true, 0, "", "seed: 1\n", "x.yaml", 15, "run/checkpoints/gen-000015"};
  const StartMessage s = decode_start(encode(start));
  EXPECT_EQ(s.resume_generation, 15);
  EXPECT_EQ(s.resume_folder, "run/checkpoints/gen-000015");
  expect_prefixes_rejected(encode(c), [](const Bytes& b) { decode_checkpoint(b); }, "checkpoint message");
  expect_prefixes_rejected(encode(MembersMessage{{1, 2}, 0, "", 102}),
                           [](const Bytes& b) { decode_members(b, "go message"); }, "go message");
}

// ---------------------------------------------------------------- ResultMessage

TEST(Protocol, ResultRoundTrip) {
  ResultMessage m;
  m.cells = {4, 5, 8, 9};
  m.ensembles = {pattern(100, 1), Bytes{}, pattern(3, 7), pattern(2048, 9)};
  const ResultMessage back = decode_result(encode(m));
  EXPECT_EQ(back.cells, m.cells);
  ASSERT_EQ(back.ensembles.size(), m.ensembles.size());
  for (std::size_t i = 0; i < m.ensembles.size(); ++i) EXPECT_EQ(back.ensembles[i], m.ensembles[i]) << i;

  const ResultMessage none = decode_result(encode(ResultMessage{}));
  EXPECT_TRUE(none.cells.empty());
  EXPECT_TRUE(none.ensembles.empty());
}

TEST(Protocol, ResultWrittenInPlaceIsTheSameMessage) {
  const std::vector<std::int32_t> cells = {3, 0, 7};
  const std::vector<Bytes> ensembles = {pattern(10, 1), Bytes{}, pattern(300, 5)};
  // The format written out by hand: the cells, a count, then each
  // ensemble with its length.
  ByteWriter expected;
  expected.put_vector(cells);
  expected.put<std::uint32_t>(3);
  for (const auto& e : ensembles) expected.put_bytes(e);
  const Bytes in_place = encode_result(cells, 0, [&](std::size_t i, ByteWriter& w) {
    for (std::uint8_t byte : ensembles[i]) w.put(byte);  // piece by piece
  });
  EXPECT_EQ(in_place, expected.bytes());
  EXPECT_EQ(encode(ResultMessage{cells, ensembles}), expected.bytes());
  EXPECT_THROW(encode(ResultMessage{cells, {pattern(1, 1)}}), std::logic_error);
}

TEST(Protocol, ResultTruncated) {
  ResultMessage m;
  m.cells = {0, 1};
  m.ensembles = {pattern(6, 1), pattern(4, 2)};
  expect_prefixes_rejected(encode(m), [](const Bytes& b) { decode_result(b); }, "result message");
}

TEST(Protocol, ResultWithAHugeCellCountIsRejected) {
  // A foreign payload whose vector length claims more cells than there are bytes.
  Bytes b(8, 0xff);
  b.push_back(1);
  EXPECT_THROW(decode_result(b), InputError);
}

}  // namespace
}  // namespace cellgan

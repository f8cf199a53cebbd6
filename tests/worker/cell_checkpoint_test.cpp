// A cell's state as bytes: decoded, it trains on exactly as the original
// does (the same losses and the same centre, to the bit), and bytes that
// are not a cell state are refused with the name given.
#include "worker/cell_checkpoint.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "tests/worker/toy_cell_fixture.h"

namespace cellgan {
namespace {

using worker_test::Fixture;
using worker_test::toy_config;

TEST(CellCheckpoint, ADecodedCellTrainsOnAsTheOriginal) {
  Fixture f(toy_config());
  CellState original = f.trainer.initial_state(4, 4);
  f.trainer.run_generation(original, f.neighbours());  // Adam state, neighbours and mixture are all set now
  const Bytes bytes = encode_cell_state(original);
  CellState copy = decode_cell_state(bytes, f.config, "cell 4");
  EXPECT_EQ(encode_cell_state(copy), bytes);
  EXPECT_EQ(copy.generation, 1);
  EXPECT_EQ(copy.mixture_weights, original.mixture_weights);
  ASSERT_EQ(copy.neighbour_generators.size(), original.neighbour_generators.size());

  const GenerationRecord a = f.trainer.run_generation(original, f.neighbours());
  const GenerationRecord b = f.trainer.run_generation(copy, f.neighbours());
  EXPECT_EQ(a.generator_loss, b.generator_loss);
  EXPECT_EQ(a.discriminator_loss, b.discriminator_loss);
  EXPECT_EQ(a.mixture_weights, b.mixture_weights);
  EXPECT_EQ(original.centre_generator().encode(), copy.centre_generator().encode());
  EXPECT_EQ(original.centre_discriminator().encode(), copy.centre_discriminator().encode());
}

TEST(CellCheckpoint, ForeignOrCutBytesAreRefusedByName) {
  Fixture f(toy_config());
  const Bytes bytes = encode_cell_state(f.trainer.initial_state(2, 4));
  const auto refused = [&](const Bytes& b, const std::string& mentions) {
    try {
      decode_cell_state(b, f.config, "ckpt/cell-0002.bin");
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("ckpt/cell-0002.bin"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(mentions), std::string::npos) << e.what();
    }
  };
  refused(Bytes(bytes.begin(), bytes.begin() + static_cast<long>(bytes.size() / 2)), "truncated");
  refused(Bytes(16, 0), "not a cell state");
  Bytes longer = bytes;
  longer.push_back(0);
  refused(longer, "trailing bytes");
  Config wider = f.config;
  wider.network.toy_hidden = 32;
  try {
    decode_cell_state(bytes, wider, "x");
    ADD_FAILURE() << "a state of another network shape was accepted";
  } catch (const InputError&) {
  }
}

}  // namespace
}  // namespace cellgan

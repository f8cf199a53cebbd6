// The keys of the GAN variants (network.kind sngan, training.loss wgan_gp,
// training.gp_lambda and training.n_critic): they parse, round-trip, and
// bad values are one line naming the file and the key.
#include <gtest/gtest.h>

#include <string>

#include "common/config.h"
#include "common/error.h"
#include "tests/common/test_files.h"

namespace cellgan {
namespace {

using test::input_error_of;

std::string parse_error(const std::string& yaml) {
  return input_error_of([&] { parse_config(yaml, "configs/bad.yaml"); });
}

// One line, starting with the file and the key.
void expect_one_line_about(const std::string& message, const std::string& key) {
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_EQ(message.rfind("configs/bad.yaml: " + key + ": ", 0), 0u) << message;
}

TEST(ConfigGanVariants, DefaultsAreGulrajanisSettings) {
  const Config c;
  EXPECT_EQ(c.training.gp_lambda, 10.0);
  EXPECT_EQ(c.training.n_critic, 5);
}

TEST(ConfigGanVariants, SnganAndWganGpAreReadAndRoundTrip) {
  const Config c = parse_config(
      "network: {kind: sngan}\ntraining: {loss: wgan_gp, gp_lambda: 2.5, n_critic: 3}\n", "ok.yaml");
  EXPECT_EQ(c.network.kind, NetworkKind::kSngan);
  EXPECT_EQ(c.training.loss, LossKind::kWganGp);
  EXPECT_EQ(c.training.gp_lambda, 2.5);
  EXPECT_EQ(c.training.n_critic, 3);
  EXPECT_STREQ(to_string(NetworkKind::kSngan), "sngan");
  EXPECT_STREQ(to_string(LossKind::kWganGp), "wgan_gp");
  EXPECT_TRUE(same_config(parse_config(to_yaml(c), "again.yaml"), c));
}

TEST(ConfigGanVariants, ANegativeLambdaIsOneLine) {
  const std::string message = parse_error("training: {loss: wgan_gp, gp_lambda: -1}\n");
  expect_one_line_about(message, "training.gp_lambda");
  EXPECT_NE(message.find("in [0, 1000]"), std::string::npos) << message;
}

TEST(ConfigGanVariants, NoCriticStepsIsOneLine) {
  const std::string message = parse_error("training: {loss: wgan_gp, n_critic: 0}\n");
  expect_one_line_about(message, "training.n_critic");
  EXPECT_NE(message.find("1..100"), std::string::npos) << message;
}

TEST(ConfigGanVariants, R1PenaltyWithWganGpIsOneLine) {
  const std::string message = parse_error("training: {loss: wgan_gp, r1_penalty: 1}\n");
  expect_one_line_about(message, "training.r1_penalty");
  EXPECT_NE(message.find("wgan_gp"), std::string::npos) << message;
  EXPECT_NO_THROW(parse_config("training: {loss: bce, r1_penalty: 1}\n", "ok.yaml"));
}

TEST(ConfigGanVariants, SnganNeedsImages) {
  expect_one_line_about(parse_error("data: {dataset: ring}\nnetwork: {kind: sngan}\n"), "network.kind");
}

// training.bce and training.mutated_lr_reaches_adam, the two differences
// from Lipizzaner: PyTorch's BCE by default (as Lipizzaner), the lr in Adam
// by default (unlike Lipizzaner); each the other way when asked.
TEST(ConfigGanVariants, LipizzanersBceAndLrAreOptions) {
  // Q5 made PyTorch's BCE the default; the lr still reaches Adam by default (Q6: the grid did worse without).
  const Config d = parse_config("seed: 1\n", "ok.yaml");
  EXPECT_EQ(d.training.bce, BceForm::kPyTorch);
  EXPECT_TRUE(d.training.mutated_lr_reaches_adam);
  const Config c = parse_config("training: {bce: clamped, mutated_lr_reaches_adam: false}\n", "ok.yaml");
  EXPECT_EQ(c.training.bce, BceForm::kClamped);
  EXPECT_FALSE(c.training.mutated_lr_reaches_adam);
  expect_one_line_about(parse_error("training: {bce: torch}\n"), "training.bce");
  expect_one_line_about(parse_error("training: {mutated_lr_reaches_adam: maybe}\n"), "training.mutated_lr_reaches_adam");
  // mse and wgan_gp take no log: the default form is no reason to refuse them.
  EXPECT_NO_THROW(parse_config("training: {loss: mse}\n", "ok.yaml"));
  EXPECT_NO_THROW(parse_config("training: {loss: mustangs, bce: clamped}\n", "ok.yaml"));
}

}  // namespace
}  // namespace cellgan

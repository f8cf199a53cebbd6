// Tests of common/step_schedule.h: discriminator_skip spaces the
// discriminators' steps for the probability losses; n_critic spaces the
// generators' steps for wgan_gp, with n_critic critic steps per generator
// step.
#include "common/step_schedule.h"

#include <gtest/gtest.h>

#include <string>

namespace cellgan {
namespace {

// "GD" per batch: which networks step on batches 0..n-1.
std::string pattern(const TrainingConfig& t, int batches) {
  std::string s;
  for (int b = 0; b < batches; ++b) {
    s += generator_steps_on(t, b) ? "G" : "-";
    s += discriminator_steps_on(t, b) ? "D" : "-";
    s += ' ';
  }
  return s;
}

TEST(StepSchedule, DiscriminatorSkipSpacesTheDiscriminatorSteps) {
  TrainingConfig t;
  t.loss = LossKind::kBce;
  t.discriminator_skip = 0;
  EXPECT_EQ(pattern(t, 3), "GD GD GD ");
  t.discriminator_skip = 1;
  EXPECT_EQ(pattern(t, 4), "GD G- GD G- ");
  t.discriminator_skip = 2;
  t.n_critic = 2;  // not read by the other losses
  for (const LossKind kind : {LossKind::kBce, LossKind::kMse, LossKind::kHeuristic, LossKind::kMustangs}) {
    t.loss = kind;
    EXPECT_EQ(pattern(t, 4), "GD G- G- GD ") << to_string(kind);
  }
}

TEST(StepSchedule, NCriticSpacesTheGeneratorStepsOfWganGp) {
  TrainingConfig t;
  t.loss = LossKind::kWganGp;
  t.discriminator_skip = 3;  // not read by wgan_gp
  t.n_critic = 1;
  EXPECT_EQ(pattern(t, 3), "GD GD GD ");
  t.n_critic = 3;
  EXPECT_EQ(pattern(t, 7), "GD -D -D GD -D -D GD ");
}

TEST(StepSchedule, NCriticCriticStepsPerGeneratorStep) {
  TrainingConfig t;
  t.loss = LossKind::kWganGp;
  t.n_critic = 5;
  int generator_steps = 0, critic_steps = 0;
  for (int b = 0; b < 100; ++b) {
    generator_steps += generator_steps_on(t, b);
    critic_steps += discriminator_steps_on(t, b);
  }
  EXPECT_EQ(critic_steps, 5 * generator_steps);
}

}  // namespace
}  // namespace cellgan

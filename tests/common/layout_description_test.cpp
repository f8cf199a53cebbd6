// LayoutDescription: what each layout's name means to those who show its runs.
#include "common/layout_description.h"

#include <gtest/gtest.h>

namespace cellgan {
namespace {

TEST(LayoutDescription, NamedReadsTheConfigurationNamesOnly) {
  EXPECT_EQ(LayoutDescription::named("coevolution")->kind(), LayoutKind::kCoevolution);
  EXPECT_EQ(LayoutDescription::named("data_parallel")->kind(), LayoutKind::kDataParallel);
  EXPECT_EQ(LayoutDescription::named("per_class")->kind(), LayoutKind::kPerClass);
  EXPECT_FALSE(LayoutDescription::named("").has_value());
  EXPECT_FALSE(LayoutDescription::named("Data_Parallel").has_value());
}

TEST(LayoutDescription, OfRunReadsARunsNameAsCoevolutionWhenItKnowsItNot) {
  EXPECT_EQ(LayoutDescription::of_run("per_class").kind(), LayoutKind::kPerClass);
  EXPECT_EQ(LayoutDescription::of_run("data_parallel").kind(), LayoutKind::kDataParallel);
  EXPECT_EQ(LayoutDescription::of_run("").kind(), LayoutKind::kCoevolution);
  EXPECT_EQ(LayoutDescription::of_run("ring").kind(), LayoutKind::kCoevolution);
}

TEST(LayoutDescription, CurvesAndSamplesAreNamedAsTheLayoutTrainsThem) {
  EXPECT_EQ(LayoutDescription(LayoutKind::kCoevolution).curve_unit(), "cell");
  EXPECT_EQ(LayoutDescription(LayoutKind::kPerClass).curve_unit(), "class");
  EXPECT_EQ(LayoutDescription(LayoutKind::kDataParallel).curve_unit(), "replicas");
  EXPECT_EQ(LayoutDescription(LayoutKind::kDataParallel).unit(), "cell");
  EXPECT_EQ(LayoutDescription(LayoutKind::kPerClass).samples_caption(), "samples.png: the generators of every class");
  EXPECT_EQ(LayoutDescription(LayoutKind::kCoevolution).samples_caption(), "samples.png: the best ensemble");
  EXPECT_EQ(LayoutDescription(LayoutKind::kDataParallel).samples_caption(), "samples.png: the best ensemble");
}

TEST(LayoutDescription, PreviewTitleNamesTheUnitUnlessOneRecordAGeneration) {
  EXPECT_EQ(LayoutDescription(LayoutKind::kCoevolution).preview_title(5, 3), "generation 5, cell 3");
  EXPECT_EQ(LayoutDescription(LayoutKind::kPerClass).preview_title(12, 7), "generation 12, class 7");
  EXPECT_EQ(LayoutDescription(LayoutKind::kDataParallel).preview_title(5, 0), "generation 5");
  EXPECT_TRUE(LayoutDescription(LayoutKind::kDataParallel).one_record_per_generation());
  EXPECT_FALSE(LayoutDescription(LayoutKind::kPerClass).one_record_per_generation());
}

TEST(LayoutDescription, TopologyInWords) {
  EXPECT_EQ(LayoutDescription(LayoutKind::kCoevolution).topology(NeighbourhoodKind::kMoore),
            to_string(NeighbourhoodKind::kMoore));
  EXPECT_EQ(LayoutDescription(LayoutKind::kPerClass).topology(NeighbourhoodKind::kMoore),
            "a class a row, no neighbours");
  EXPECT_EQ(LayoutDescription(LayoutKind::kDataParallel).topology(NeighbourhoodKind::kMoore), "one replicated pair");
}

TEST(LayoutDescription, BestLabelAsTheLayoutNamesIt) {
  EXPECT_EQ(LayoutDescription(LayoutKind::kCoevolution).best_label(3), "cell 3");
  EXPECT_EQ(LayoutDescription(LayoutKind::kCoevolution).best_label(std::nullopt), "grid");
  EXPECT_EQ(LayoutDescription(LayoutKind::kPerClass).best_label(4), "class 4");
  EXPECT_EQ(LayoutDescription(LayoutKind::kPerClass).best_label(std::nullopt), "every class (the conditional mixture)");
  EXPECT_EQ(LayoutDescription(LayoutKind::kDataParallel).best_label(0), "the replicas' generator");
}

TEST(LayoutDescription, OnlyDataParallelTimingIsNotShared) {
  EXPECT_EQ(LayoutDescription(LayoutKind::kDataParallel).timing_sharers(4), 1);
  EXPECT_EQ(LayoutDescription(LayoutKind::kCoevolution).timing_sharers(4), 4);
  EXPECT_EQ(LayoutDescription(LayoutKind::kPerClass).timing_sharers(3), 3);
}

}  // namespace
}  // namespace cellgan

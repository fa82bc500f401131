// tests/schedule/test_schedule_hatschet.cpp — every HatScheT loop in
// ../shared/bench-data/hatschet (343 CHStone / MachSuite loops) through both generators:
// each schedule valid under the independent checker, ii ≥ MII, and the cost-based
// generator's mean ii / MII within 2 % (several of these loops have no schedule at MII).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "passes/schedule/generate_schedule.h"
#include "passes/schedule/schedule_lab.h"
#include "tests/schedule/schedule_test_support.h"

namespace tilec::schedule {
namespace {

TEST(Hatschet, EveryLoopGetsAValidSchedule) {
  std::filesystem::path folder = std::filesystem::path(TILEC_SHARED_DIR) / "bench-data" / "hatschet";
  if (!std::filesystem::is_directory(folder))
    GTEST_SKIP() << "no HatScheT corpus at " << folder << " (the shared folder is not beside the repository)";
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(folder))
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  ASSERT_EQ(files.size(), 343u);
  double ratio_sum = 0;
  for (const auto& file : files) {
    std::ifstream stream(file);
    std::stringstream text;
    text << stream.rdbuf();
    LabInput lab = parse_schedule_lab(text.str());
    ASSERT_TRUE(lab.errors.empty()) << file;
    for (Generator generator : {Generator::automatic, Generator::cost_based}) {
      ScheduleOptions options;
      options.generator = generator;
      ScheduleResult result = generate_schedule(lab.graph, options);
      ASSERT_EQ(testing::check_independently(lab.graph, result), "") << file;
      ASSERT_GE(result.ii, result.mii) << file;
      if (generator == Generator::cost_based) ratio_sum += static_cast<double>(result.ii) / result.mii;
    }
  }
  EXPECT_LE(ratio_sum / files.size(), 1.02);
}

}  // namespace
}  // namespace tilec::schedule

// --device auto: what each rank resolves it to, and the line that fails setup when the ranks of one
// job came to different devices (trainer/device_choice.hpp): no GPU needed.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "trainer/device_choice.hpp"

namespace commsgd::trainer {
namespace {

TEST(DeviceChoice, AutoTakesTheGpuOnlyWhereTheBuildAndTheNodeBothHaveOne) {
  EXPECT_EQ(resolve_auto_device("auto", true, true), "cuda");
  EXPECT_EQ(resolve_auto_device("auto", true, false), "cpu");   // a CUDA build on a CPU node
  EXPECT_EQ(resolve_auto_device("auto", false, true), "cpu");   // a CPU build on a GPU node
  EXPECT_EQ(resolve_auto_device("auto", false, false), "cpu");  // this machine
}

TEST(DeviceChoice, AGivenDeviceIsItselfWhateverTheMachineHas) {
  for (const bool cuda_built : {false, true}) {
    for (const bool gpu_visible : {false, true}) {
      for (const char* device : {"cpu", "cuda", "cuda:1"}) {
        EXPECT_EQ(resolve_auto_device(device, cuda_built, gpu_visible), device);
      }
    }
  }
}

TEST(DeviceChoice, RanksOnOneDeviceKindAgree) {
  EXPECT_FALSE(device_disagreement("auto", 0, 4));
  EXPECT_FALSE(device_disagreement("auto", 4, 4));
  EXPECT_FALSE(device_disagreement("cpu", 0, 1));
  EXPECT_FALSE(device_disagreement("cuda", 1, 1));
}

TEST(DeviceChoice, RanksSplitBetweenGpuAndCpuFailWithOneLineSayingWhatToDo) {
  const std::optional<std::string> problem = device_disagreement("auto", 3, 4);
  ASSERT_TRUE(problem);
  EXPECT_TRUE(problem->starts_with(
      "--device auto: 3 of 4 ranks would train on a GPU and the others on the CPU"))
      << *problem;
  EXPECT_NE(problem->find("set --device cpu or cuda"), std::string::npos) << *problem;
  EXPECT_EQ(problem->find('\n'), std::string::npos) << *problem;
  EXPECT_TRUE(device_disagreement("auto", 1, 2));
}

}  // namespace
}  // namespace commsgd::trainer

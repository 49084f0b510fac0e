#include "core/text.h"

#include <gtest/gtest.h>

namespace fabtrack {
namespace {

using Views = std::vector<std::string_view>;

TEST(Text, SplitKeepsEveryItemEmptyOnesIncluded) {
  EXPECT_EQ(Split("a,b", ','), (Views{"a", "b"}));
  EXPECT_EQ(Split("a,,b", ','), (Views{"a", "", "b"}));
  EXPECT_EQ(Split("a,", ','), (Views{"a", ""}));
  EXPECT_EQ(Split(",a", ','), (Views{"", "a"}));
  EXPECT_EQ(Split("", ','), (Views{""}));
  EXPECT_EQ(Split("a:b", ','), (Views{"a:b"}));
}

TEST(Text, JoinIsSplitsInverse) {
  const std::vector<std::string> items = {"x", "", "yz"};
  const std::string joined = Join(items, ",");
  EXPECT_EQ(joined, "x,,yz");
  EXPECT_EQ(Split(joined, ','), (Views{"x", "", "yz"}));
  EXPECT_EQ(Join({}, ","), "");
}

}  // namespace
}  // namespace fabtrack

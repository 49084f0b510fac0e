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

TEST(Text, TrimBlanksDropsSpacesTabsAndACarriageReturn) {
  EXPECT_EQ(TrimBlanks(" \ta b\t \r"), "a b");
  EXPECT_EQ(TrimBlanks("a"), "a");
  EXPECT_EQ(TrimBlanks(" \t "), "");
  EXPECT_EQ(TrimBlanks(""), "");
  EXPECT_EQ(TrimBlanks("\ra"), "\ra") << "a carriage return only at the end";
}

}  // namespace
}  // namespace fabtrack

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

TEST(Text, SplitBlanksDropsEmptyWords) {
  EXPECT_EQ(SplitBlanks(" a  b\tc \t"), (Views{"a", "b", "c"}));
  EXPECT_EQ(SplitBlanks("cpu0 1 2"), (Views{"cpu0", "1", "2"}));
  EXPECT_EQ(SplitBlanks(" \t "), Views{});
  EXPECT_EQ(SplitBlanks(""), Views{});
  EXPECT_EQ(SplitBlanks("a\tb  c", " "), (Views{"a\tb", "c"})) << "only the blanks named";
}

TEST(Text, FormatFixedPrintsTheDecimalsAsked) {
  EXPECT_EQ(FormatFixed(12.5, 2), "12.50");
  EXPECT_EQ(FormatFixed(0.125, 0), "0");
  EXPECT_EQ(FormatFixed(-3.14159, 3), "-3.142");
  EXPECT_EQ(FormatFixed(1e20, 1), "100000000000000000000.0");
}

}  // namespace
}  // namespace fabtrack

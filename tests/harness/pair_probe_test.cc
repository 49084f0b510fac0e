#include "collector/harness/pair_probe.h"

#include <gtest/gtest.h>

namespace fabtrack::harness {
namespace {

TEST(ParseProbePairs, PairsOfDistinctHosts) {
  auto pairs = ParseProbePairs("n1:n2,n3:n4");
  ASSERT_TRUE(pairs);
  ASSERT_EQ(pairs->size(), 2u);
  EXPECT_EQ((*pairs)[0].a, "n1");
  EXPECT_EQ((*pairs)[0].b, "n2");
  EXPECT_EQ((*pairs)[1].a, "n3");
  EXPECT_EQ((*pairs)[1].b, "n4");
  EXPECT_EQ(FormatProbePairs(*pairs), "n1:n2,n3:n4");
}

TEST(ParseProbePairs, MalformedListsAreRefused) {
  for (const char* text : {"", "n1:n2,", ",n1:n2", "n1", "n1:", ":n2", "n1:n2:n3", "n1:n1",
                           "n1:n2,n2:n3", "n1:n2,,n3:n4"}) {
    EXPECT_FALSE(ParseProbePairs(text)) << text;
  }
}

}  // namespace
}  // namespace fabtrack::harness

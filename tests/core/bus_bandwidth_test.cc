// The busbw factors against nccl-tests' GetBw formulas (src/<collective>.cu),
// worked by hand for 8 ranks.
#include "core/bus_bandwidth.h"

#include <gtest/gtest.h>

namespace fabtrack {
namespace {

TEST(BusBandwidthTest, FactorsOfEveryCollectiveAtEightRanks) {
  EXPECT_DOUBLE_EQ(*BusBandwidthFactor("all_reduce", 8), 14.0 / 8);
  for (const char* c :
       {"all_gather", "reduce_scatter", "alltoall", "alltoallv", "gather", "scatter"}) {
    EXPECT_DOUBLE_EQ(*BusBandwidthFactor(c, 8), 7.0 / 8) << c;
  }
  // hypercube's algbw already counts the n-1 peers; broadcast, reduce and
  // sendrecv move the buffer once.
  for (const char* c : {"hypercube", "broadcast", "reduce", "sendrecv"}) {
    EXPECT_DOUBLE_EQ(*BusBandwidthFactor(c, 8), 1.0) << c;
  }
  EXPECT_EQ(BusBandwidthFactor("all_reduce", 0), std::nullopt);
  EXPECT_EQ(BusBandwidthFactor("bogus", 8), std::nullopt);
}

TEST(BusBandwidthTest, EveryKnownCollectiveHasAFactorAndAProgramName) {
  std::vector<std::string> names = KnownCollectives();
  EXPECT_EQ(names.size(), 11u);
  for (const std::string& name : names) {
    EXPECT_TRUE(BusBandwidthFactor(name, 4)) << name;
    EXPECT_EQ(CanonicalCollective(name + "_perf"), name);
    EXPECT_EQ(CanonicalCollective(name + "_perf_mpi"), name);
  }
}

}  // namespace
}  // namespace fabtrack

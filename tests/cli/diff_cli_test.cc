// `fabtrack diff A B` against real PostgreSQL: two stored runs that differ in
// NCCL version, one NCCL setting, hosts and network; the diff names exactly
// those and what busbw did at the largest size both measured.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/fabtrack_cli.h"
#include "tests/support/run_command.h"
#include "tests/support/test_database.h"

namespace fabtrack {
namespace {

using fabtrack::testing::CommandOutput;
using fabtrack::testing::Fabtrack;
using fabtrack::testing::TestDatabase;

TEST(DiffCli, NamesWhatChangedBetweenTwoRuns) {
  TestDatabase db;
  const std::string fx = FABTRACK_FIXTURE_DIR;
  ASSERT_EQ(Fabtrack("ingest --cluster lab --nodes 2 --at 2026-12-01T02:00:00Z " + fx +
                         "/fake_nccl_tests/outputs/all_reduce.2.txt",
                     db)
                .exit_code,
            0);
  ASSERT_EQ(Fabtrack("ingest --cluster lab --nodes 2 --at 2026-12-02T02:00:00Z " + fx +
                         "/nccl_tests/j01_allreduce_complete.json",
                     db)
                .exit_code,
            0);
  const std::string a = db.Scalar("SELECT min(id) FROM runs"),
                    b = db.Scalar("SELECT max(id) FROM runs");
  CommandOutput r = Fabtrack("diff " + a + " " + b + " --format json", db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json doc = nlohmann::json::parse(r.out);
  std::map<std::string, nlohmann::json> facts;
  for (const auto& f : doc["facts"]) facts[f["name"]] = f;
  EXPECT_EQ(facts["nccl_version"]["before"], "2.28.9");
  EXPECT_EQ(facts["nccl_version"]["after"], "2.29.7");
  EXPECT_EQ(facts["NCCL_IB_HCA"]["before"], nullptr);
  EXPECT_EQ(facts["NCCL_IB_HCA"]["after"], "mlx5_0,mlx5_1");
  EXPECT_EQ(facts["hosts"]["before"], nlohmann::json({"gpu-a01", "gpu-a02"}));  // removed
  EXPECT_EQ(facts["hosts"]["after"], nlohmann::json({"jnode-a", "jnode-b"}));   // added
  EXPECT_EQ(facts["network"]["before"], "Socket");
  EXPECT_EQ(facts.count("collective"), 0u);  // both all_reduce
  EXPECT_EQ(facts.count("nodes"), 0u);       // both 2
  ASSERT_FALSE(doc["metrics"].empty());
  EXPECT_EQ(doc["metrics"][0]["size_bytes"], 134217728);
  EXPECT_DOUBLE_EQ(doc["metrics"][0]["before"].get<double>(), 1.19);
  EXPECT_NEAR(doc["metrics"][0]["after"].get<double>(), 36.77, 0.01);

  r = Fabtrack("diff " + a + " " + b, db);
  EXPECT_NE(r.out.find("nccl_version: 2.28.9 → 2.29.7"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("busbw at 128 MiB: 1.19 → 36.77 GB/s"), std::string::npos) << r.out;
  EXPECT_EQ(Fabtrack("diff " + a + " 999999", db).exit_code, 1);
}

}  // namespace
}  // namespace fabtrack

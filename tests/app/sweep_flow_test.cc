// app::SweepFlow's bracket hooks (issue 31 item 3): a measurement added to
// the flow runs just before and just after every launch, nested, and what it
// attaches is stored with the run in the run's transaction. The launches are
// the stand-in nccl-tests programs (tests/fixtures/fake_nccl_tests) run on
// this host without a launcher; the database is the test run's PostgreSQL.
#include "app/sweep_flow.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "core/exit_code.h"
#include "tests/support/test_database.h"

namespace fabtrack::app {
namespace {
namespace fs = std::filesystem;

// Writes what it sees to a shared log: the launch it brackets and whether
// the benchmark's transcript exists yet (it does not before the launch).
class LoggingBracket : public RunBracket {
 public:
  LoggingBracket(std::string name, std::vector<std::string>* log)
      : name_(std::move(name)), log_(log) {}
  void Before(const sweep::SweepSpec&, const sweep::PlannedRun& run) override {
    log_->push_back(name_ + " before " + std::to_string(run.nodes) + " transcript " +
                    (fs::exists(*run.transcript_file) ? "yes" : "no"));
  }
  void After(const sweep::SweepSpec&, const sweep::PlannedRun& run) override {
    log_->push_back(name_ + " after " + std::to_string(run.nodes) + " transcript " +
                    (fs::exists(*run.transcript_file) ? "yes" : "no"));
    ++windows_;
  }
  void Attach(store::SpoolBatch* batch) const override {
    batch->run.tags["bracket_" + name_] = "window " + std::to_string(windows_);
  }

 private:
  std::string name_;
  std::vector<std::string>* log_;
  int windows_ = 0;
};

class RecordingProgress : public SweepProgress {
 public:
  void Launching(const sweep::PlannedRun& run) override {
    events.push_back("launch " + std::to_string(run.nodes));
  }
  void Stored(const StoredRun& run) override {
    events.push_back(std::string(run.inserted ? "stored" : "found") + " " +
                     std::to_string(run.sizes) + " sizes" +
                     (run.bracketed_hosts ? " bracketed" : ""));
  }
  void AbStarting(const AbRecord&) override {}
  void AbSideStarting(char, int, const std::string&) override {}
  void AbStored(std::optional<int64_t>, int) override {}
  std::vector<std::string> events;
};

TEST(SweepFlow, BracketsNestAroundEachLaunchAndTheirDataIsStoredWithTheRun) {
  testing::TestDatabase db;
  const std::string dir = ::testing::TempDir() + "/sweep_flow_" + std::to_string(getpid());
  fs::remove_all(dir);
  SweepRequest request;
  sweep::SweepSpec& spec = request.spec;
  spec.launcher = sweep::Launcher::kDirect;
  spec.node_counts = {1};
  spec.benchmark = sweep::Benchmark::kNcclTests;
  spec.nccl_tests = {
      {"all_reduce", std::string(FABTRACK_FIXTURE_DIR) + "/fake_nccl_tests/bin/all_reduce_perf"}};
  spec.nccl_tests_json = true;
  spec.sweep_id = "flowtest";
  spec.output_dir = dir + "/out";
  spec.hostfile_dir = spec.output_dir;
  ASSERT_EQ(sweep::ValidateSpec(spec), "");
  request.cluster = "flow";
  request.ports = PortBracketing::kOff;
  std::vector<std::string> log;
  request.brackets = {std::make_shared<LoggingBracket>("outer", &log),
                      std::make_shared<LoggingBracket>("inner", &log)};
  RecordingProgress progress;
  std::ostringstream err;
  {
    SweepFlow flow(std::move(request), DatabaseChoice{db.conninfo(), std::nullopt}, progress, err);
    flow.RunPlan();
    const SweepTally tally = flow.tally();
    EXPECT_EQ(tally.planned, 1u);
    EXPECT_EQ(tally.stored, 1);
    EXPECT_EQ(tally.runs_spooled, 0);
    flow.Finish();
  }
  EXPECT_EQ(log, (std::vector<std::string>{
                     "outer before 1 transcript no", "inner before 1 transcript no",
                     "inner after 1 transcript yes", "outer after 1 transcript yes"}))
      << err.str();
  ASSERT_EQ(progress.events.size(), 2u) << err.str();
  EXPECT_EQ(progress.events[0], "launch 1");
  EXPECT_EQ(progress.events[1].rfind("stored ", 0), 0u) << progress.events[1];
  EXPECT_EQ(progress.events[1].find("bracketed"), std::string::npos);  // no port bracket
  EXPECT_EQ(db.Scalar("SELECT tags->>'bracket_outer' || ', ' || (tags->>'bracket_inner') || ', ' "
                      "|| cluster || ', ' || sweep_id FROM runs"),
            "window 1, window 1, flow, flowtest");
  // The folder was given (not the flow's own): it stays.
  EXPECT_TRUE(fs::exists(dir + "/out"));
  fs::remove_all(dir);
}

// A sweep that cannot create its output folder stops before the database.
TEST(SweepFlow, AnUnwritableOutputFolderIsAnInputError) {
  SweepRequest request;
  request.spec.output_dir = "/proc/self/fabtrack-cannot-be-here";
  RecordingProgress progress;
  std::ostringstream err;
  try {
    SweepFlow flow(std::move(request), DatabaseChoice{"host=/nonexistent dbname=x", std::nullopt},
                   progress, err);
    FAIL() << "constructed";
  } catch (const CommandExit& e) {
    EXPECT_EQ(e.code, kExitInputError);
  }
  EXPECT_NE(err.str().find("cannot create /proc/self/fabtrack-cannot-be-here"), std::string::npos)
      << err.str();
}

}  // namespace
}  // namespace fabtrack::app

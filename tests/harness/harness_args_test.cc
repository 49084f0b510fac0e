// fabtrack-allreduce's command line: the flags `fabtrack sweep` checks before
// launching ranks, and the command line a run records.
#include "collector/harness/harness_args.h"

#include <gtest/gtest.h>

namespace fabtrack::harness {
namespace {

TEST(CheckHarnessArgsTest, RefusesWhatEveryRankWouldRefuse) {
  EXPECT_EQ(CheckHarnessArgs({"-b", "8", "-e", "4M", "-f", "8"}, true), "");
  EXPECT_EQ(CheckHarnessArgs({}, true), "");
  EXPECT_EQ(CheckHarnessArgs({"-h"}, true), "");
  EXPECT_EQ(CheckHarnessArgs({"-b", "8Q"}, true), "-b 8Q: not a size (use e.g. 8, 1K, 64M, 2G)");
  EXPECT_NE(CheckHarnessArgs({"-b", "8K", "-e", "4K"}, true).find("is smaller than -b"),
            std::string::npos);
  EXPECT_NE(CheckHarnessArgs({"--bogus"}, true), "");
  EXPECT_EQ(CheckHarnessArgs({"-d", "quad"}, true), "-d quad: unknown data type");
}

TEST(RecordedCommandLineTest, NeverRecordsAConninfo) {
  const char* argv[] = {"fabtrack-allreduce",      "-b",        "8",   "--db",
                        "host=db passwrd=hunter2", "--cluster", "lab", "--db=password=x"};
  EXPECT_EQ(RecordedCommandLine(8, argv),
            "fabtrack-allreduce -b 8 --db '***' --cluster lab '--db=***'");
  const char* quoted[] = {"fabtrack-allreduce", "--tag", "note=two words"};
  EXPECT_EQ(RecordedCommandLine(3, quoted), "fabtrack-allreduce --tag 'note=two words'");
}

}  // namespace
}  // namespace fabtrack::harness

#include "collector/parse/line_cleaner.h"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

namespace fabtrack {
namespace {

struct Case {
  const char* name;
  const char* raw;
  const char* text;
  const char* stream;
  int launcher_rank;
};

// Failure messages name the case instead of dumping its bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class CleanOneLineTest : public ::testing::TestWithParam<Case> {};

TEST_P(CleanOneLineTest, RemovesDecoration) {
  const Case& c = GetParam();
  CleanLine line = CleanOneLine(c.raw, 7);
  EXPECT_EQ(line.number, 7);
  EXPECT_EQ(line.text, c.text);
  EXPECT_EQ(line.stream, c.stream);
  EXPECT_EQ(line.launcher_rank, c.launcher_rank);
}

INSTANTIATE_TEST_SUITE_P(
    Prefixes, CleanOneLineTest,
    ::testing::Values(
        Case{"Plain", "# nThread 1 nGpus 1", "# nThread 1 nGpus 1", "", -1},
        Case{"OpenMpiStdout", "[1,0]<stdout>:# Avg bus bandwidth    : 1.5 ",
             "# Avg bus bandwidth    : 1.5", "stdout", 0},
        Case{"OpenMpiStderrRank12", "[1,12]<stderr>:oops", "oops", "stderr", 12},
        Case{"OpenMpiStddiag", "[3,2]<stddiag>:diag", "diag", "stddiag", 2},
        Case{"OpenMpiEmptyPayload", "[1,1]<stdout>:", "", "stdout", 1},
        Case{"OpenMpiRowKeepsNumbers", "[1,0]<stdout>:           8             2     float",
             "8             2     float", "stdout", 0},
        Case{"BracketRank", "[155] #  Rank  0 Group  0 Pid 1 on h device 0 [0x1] G",
             "#  Rank  0 Group  0 Pid 1 on h device 0 [0x1] G", "", 155},
        Case{"BracketRankNoSpace", "[0]1048576 262144 float", "1048576 262144 float", "", 0},
        Case{"SrunLabel", "0: # Out of bounds values : 0 OK", "# Out of bounds values : 0 OK", "",
             0},
        Case{"SrunLabelTwoDigits", "13: host:1:2 [0] NCCL INFO x", "host:1:2 [0] NCCL INFO x", "",
             13},
        Case{"StackedSrunAndOpenMpi", "1: [1,3]<stdout>:#  Rank  3", "#  Rank  3", "stdout", 3},
        Case{"StackedOpenMpiAndBracket", "[1,0]<stdout>:[4] 8 2 float", "8 2 float", "stdout", 4},
        Case{"NcclDeviceFieldKept", "[0] NCCL INFO Bootstrap : Using eth0",
             "[0] NCCL INFO Bootstrap : Using eth0", "", -1},
        Case{"NcclDeviceFieldKeptAfterTag", "[1,0]<stdout>:[2] NCCL INFO Ring 00",
             "[2] NCCL INFO Ring 00", "stdout", 0},
        Case{"MarkdownIndentation", "    # nThread 1", "# nThread 1", "", -1},
        Case{"TabIndentation", "\t\t268435456  67108864", "268435456  67108864", "", -1},
        Case{"CarriageReturn", "# Avg bus bandwidth : 2.5 \r", "# Avg bus bandwidth : 2.5", "", -1},
        // Not launcher prefixes: left alone.
        Case{"RowStartingWithZero", "0             0     float", "0             0     float", "",
             -1},
        Case{"ClockIsNotALabel", "10:11:12 started", "10:11:12 started", "", -1},
        Case{"HostBracketNotRank", "[node-1:10558] 15 more processes",
             "[node-1:10558] 15 more processes", "", -1},
        Case{"TimestampBracketNotRank", "[2023-12-20 16:35:35,473] [INFO] x",
             "[2023-12-20 16:35:35,473] [INFO] x", "", -1},
        Case{"IncompleteOpenMpiTag", "[1,0]<stdo", "[1,0]<stdo", "", -1},
        Case{"Empty", "", "", "", -1}, Case{"OnlyBlanks", "   \t \r", "", "", -1}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

TEST(SplitAndClean, NumbersLinesFromOneAndHandlesCrlf) {
  std::vector<CleanLine> lines =
      SplitAndClean("[1,0]<stdout>:# a\r\n\r\n  0: b \r\n[1,1]<stderr>:c");
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].number, 1);
  EXPECT_EQ(lines[0].text, "# a");
  EXPECT_EQ(lines[0].stream, "stdout");
  EXPECT_EQ(lines[1].number, 2);
  EXPECT_EQ(lines[1].text, "");
  EXPECT_EQ(lines[2].number, 3);
  EXPECT_EQ(lines[2].text, "b");
  EXPECT_EQ(lines[2].launcher_rank, 0);
  EXPECT_EQ(lines[3].number, 4);
  EXPECT_EQ(lines[3].text, "c");
  EXPECT_EQ(lines[3].launcher_rank, 1);
  EXPECT_EQ(lines[3].stream, "stderr");
}

TEST(SplitAndClean, FinalNewlineAddsNoLine) {
  EXPECT_EQ(SplitAndClean("a\nb\n").size(), 2u);
  EXPECT_EQ(SplitAndClean("a\nb").size(), 2u);
  EXPECT_TRUE(SplitAndClean("").empty());
}

TEST(SplitAndClean, EmptyLinesKeepTheirNumbers) {
  std::vector<CleanLine> lines = SplitAndClean("\n\n\nx\n");
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[3].number, 4);
  EXPECT_EQ(lines[3].text, "x");
}

TEST(SplitAndClean, OverlongRankNumbersAreNotPrefixes) {
  // More digits than a rank can have: left as text, not parsed into an int.
  CleanLine line = CleanOneLine("[12345678901] x", 1);
  EXPECT_EQ(line.text, "[12345678901] x");
  EXPECT_EQ(line.launcher_rank, -1);
}

// Round nine (real pastes answered with GitHub's "Quote reply" or by
// e-mail): the quoting comes off every line, the line count stays.
TEST(UnquoteReply, EveryQuotedLineLosesItsMarksAndKeepsItsPlace) {
  EXPECT_EQ(UnquoteReply("> CA 'mlx5_0'\n> \tPort 1:\n>\n> \t\tState: Active\n"),
            "CA 'mlx5_0'\n\tPort 1:\n\n\t\tState: Active\n");
  // A reply to a reply: the first post twice quoted beside once-quoted words.
  EXPECT_EQ(UnquoteReply("> > GPU0\t X \n> >\n> ok\n\n"), "GPU0\t X \n\nok\n\n");
  // CRLF lines keep their ends.
  EXPECT_EQ(UnquoteReply("> a\r\n> b\r\n"), "a\r\nb\r\n");
  // One line not quoted: nothing is taken off ("> ethtool -S eth2" quotes
  // only the command above its output).
  EXPECT_EQ(UnquoteReply("> ethtool -S eth2\nNIC statistics:\n"), std::nullopt);
  EXPECT_EQ(UnquoteReply("\n\n"), std::nullopt);
  EXPECT_EQ(UnquoteReply(""), std::nullopt);
}

}  // namespace
}  // namespace fabtrack

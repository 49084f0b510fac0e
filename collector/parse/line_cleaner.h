// Undoes the decoration that launchers and renderers add around nccl-tests and
// NCCL output, so the format parsers see the text the program printed.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabtrack {

struct CleanLine {
  int number = 0;          // 1-based line number in the original file
  std::string text;        // prefixes removed, trailing whitespace and CR removed
  std::string stream;      // "stdout" / "stderr" when an Open MPI tag said so, else ""
  int launcher_rank = -1;  // rank from "[1,3]<stdout>:", "[3] ", "3: " prefixes; -1 if none
  // The file's last line ended without a newline: the writer may have been
  // cut off mid-line (a killed job, an excerpt), so its words may be cut too.
  bool unterminated = false;
};

// Removes, repeatedly from the start of a line: Open MPI output tags
// ("[1,0]<stdout>:"), Slurm/MPICH rank labels ("[155] ", "0: "), markdown list
// indentation (leading whitespace), and trailing whitespace / CR.
// A "[3] NCCL INFO" (CUDA device field of a prefix-less NCCL line) is kept.
CleanLine CleanOneLine(std::string_view raw, int number);

// The same into an existing line, reusing its buffers: the streaming parse
// cleans millions of lines and must not allocate for each.
void CleanOneLineInto(std::string_view raw, int number, CleanLine* out);

// Splits text into lines (LF or CRLF) and cleans each one; a last line
// without a newline is marked `unterminated`.
std::vector<CleanLine> SplitAndClean(std::string_view text);

// A document quoted whole as a reply quotes it (GitHub's "Quote reply", an
// e-mail answer: "> " before every line, "> > " where it quotes a quote):
// the text with every line's quoting taken off, line for line (numbers
// unchanged). nullopt when some non-blank line is not quoted: a post that
// only quotes a command ("> ethtool -S eth2") keeps its lines as they are.
std::optional<std::string> UnquoteReply(std::string_view text);

// The text without the UTF-8 byte order mark a Windows editor puts first
// (EF BB BF), which would make the first line no line of any tool.
std::string_view WithoutByteOrderMark(std::string_view text);

}  // namespace fabtrack

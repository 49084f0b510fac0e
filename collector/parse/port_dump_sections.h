// How operators save and paste port dumps, taken apart before any tool's
// output is read (collector/parse/port_dump_parser.h): a document may hold
// several hosts (`==> gpu-a.txt <==` from tail/head, `### host gpu-a`,
// `[root@gpu-a ~]# ibstat` prompts, `gpu-a:` headers, pdsh's `gpu-a: `
// prefixes), and one host's part several tools' outputs (a node-check file:
// ibstat, then mlxlink, then perfquery), each kept to its own lines. Saved
// sysfs files in the shapes people print them (`for f in *; do echo "===
// ./$f ==="; cat $f; done`, `tail -n +1 *`'s `==> FILE <==`, `grep . *`'s
// relative `FILE:VALUE`) become the `PATH VALUE` lines of the sysfs reader,
// the directory from the shell prompt, a `cd` line or the caller. Pure.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collector/parse/port_dump_parser.h"

namespace fabtrack {

struct DumpLine {
  int number = 0;  // 1-based, in the whole document
  std::string_view text;
};

// One tool's output: its lines and the command that printed it, when the
// dump kept the prompt ("perfquery -x -C mlx5_0 -P 1", "ethtool -S eth2").
struct DumpSection {
  PortDumpFormat format = PortDumpFormat::kIbstat;
  std::optional<std::string> command;
  std::vector<DumpLine> lines;
  // The line that ended the section when it is no line of any tool and
  // directly follows it ("        bas" after an ibstatus block): 0 when none.
  int broken_by = 0;
  std::string_view broken_text;  // that line, trimmed
};

struct HostSections {
  std::optional<std::string> host;  // set when the document names two hosts or more
  int first_line = 1;
  int last_line = 0;  // the last non-blank line of the host's part
  std::vector<DumpSection> sections;
  std::vector<PortDumpError> errors;  // sysfs files whose directory is unknown, ...
};

// The document's hosts (one, unnamed, unless it names two or more) and
// their tools' sections. Lines the views point to live in `text` or, when
// made up (a cat-loop file as a sysfs line), in `made`.
std::vector<HostSections> SplitPortDumpDocument(std::string_view text,
                                                const PortDumpContext& context,
                                                std::deque<std::string>* made);

// "gpu-a.ibstat.txt", "/tmp/dumps/gpu-a.txt" -> "gpu-a".
std::string HostOfFileName(std::string_view path);

// `ethtool -S`'s first line, "NIC statistics:", also with a note after it as
// a how-to writes one ("NIC statistics:   # the netdev's counters").
bool IsNicStatisticsLine(std::string_view trimmed);

}  // namespace fabtrack

// The text report NCCL's RAS prints for STATUS / VERBOSE STATUS
// (src/ras/client_support.cc): a job summary table, "Communicators... (Xs)"
// with one row per group of alike communicators, then "Errors" and
// "Warnings" sections of blocks. Line-oriented: each line is recognised on
// its own words, so that reordered or added lines of later releases do not
// derail what follows. The line shapes are those of client_support.cc's
// rasOutAppend calls in 2.24.3 to 2.30.7 (tests/parse/ras_report_test.cc
// has one of each, per release).
#include <algorithm>
#include <charconv>
#include <sstream>

#include "collector/ras/ras_report.h"
#include "core/pattern.h"

namespace fabtrack::ras {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::optional<int64_t> ToInt(std::string_view s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

int ToSmallInt(const std::string& s) {
  auto v = ToInt(s);
  return v && *v >= INT32_MIN && *v <= INT32_MAX ? static_cast<int>(*v) : -1;
}

std::vector<std::string> Words(std::string_view s) {
  std::vector<std::string> out;
  std::istringstream in{std::string(s)};
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// Whether `s` holds a character std::regex's '.' does not match (a line
// terminator) or one \S does not (white space); the fast paths below take
// only lines without them, so they match exactly what the patterns match.
bool HasLineBreak(std::string_view s) { return s.find_first_of("\n\r") != s.npos; }
bool HasSpace(std::string_view s) { return s.find_first_of(" \t\n\v\f\r") != s.npos; }
bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "GPU 1 managed by process 4242 on node 10.1.0.7" or "[process information
// not found]" (the part after " -- "). A verbose report of a big job has a
// line like this per rank of a group under half the communicator (65,535 at
// 131,072 ranks): read by hand, as the pattern reads it (the greedy GPU
// part ends at the last " managed by process "); the pattern itself only
// for a line with a line break in it.
void ReadRankOwner(std::string_view owner, RankRef* r) {
  if (!HasLineBreak(owner)) {
    constexpr std::string_view kGpu = "GPU ", kBy = " managed by process ", kOn = " on node ";
    if (!StartsWith(owner, kGpu)) return;
    size_t by = owner.rfind(kBy);
    if (by == owner.npos || by < kGpu.size() + 1) return;  // (.+): one character at least
    std::string_view rest = owner.substr(by + kBy.size());
    size_t on = rest.find(kOn);
    if (on == rest.npos || !AllDigits(rest.substr(0, on))) return;
    std::string_view node = rest.substr(on + kOn.size());
    if (node.empty() || HasSpace(node)) return;
    r->gpu = std::string(owner.substr(kGpu.size(), by - kGpu.size()));
    r->pid = ToInt(rest.substr(0, on));
    r->node = std::string(node);
    return;
  }
  static const Pattern kOwner(R"(GPU (.+) managed by process (\d+) on node (\S+))");
  PatternMatch m;
  if (kOwner.Matches(owner, &m)) {
    r->gpu = m.str(1);
    r->pid = ToInt(m.str(2));
    r->node = m.str(3);
  }
}

// "Rank 17 -- GPU ...", "Rank 3 has status INIT -- GPU ...": the rank, what
// comes between it and the first " -- " (the state), and the owner after
// it, as the pattern `Rank (\d+)(?: (.*?))? -- (.*)` reads them (the lazy
// state ends at the first " -- " after the space; none: the owner follows
// the number). False where the pattern would not match or the line has a
// line break (then the pattern decides).
bool SplitRankLine(std::string_view body, std::string_view* number, std::string_view* state,
                   std::string_view* owner) {
  constexpr std::string_view kRank = "Rank ", kDash = " -- ";
  if (!StartsWith(body, kRank) || HasLineBreak(body)) return false;
  std::string_view rest = body.substr(kRank.size());
  size_t digits = 0;
  while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
  if (digits == 0) return false;
  *number = rest.substr(0, digits);
  rest = rest.substr(digits);
  if (rest.empty() || rest[0] != ' ') return false;
  size_t dash = rest.find(kDash, 1);
  if (dash != rest.npos) {
    *state = rest.substr(1, dash - 1);
    *owner = rest.substr(dash + kDash.size());
    return true;
  }
  if (StartsWith(rest, kDash)) {
    *state = {};
    *owner = rest.substr(kDash.size());
    return true;
  }
  return false;
}

// "Process 4242 on node 10.1.0.7 managing GPUs 0,1 (NVML 2,3)"; the node is
// empty where NCCL knows no address, the GPU list where the process has none.
const Pattern& ProcessLine() {
  static const Pattern kProcess(R"(Process (\d+) on node (\S*) managing GPUs?(?: (.*))?)");
  return kProcess;
}

// "#0-0 (27a079b828ff1a75) MISMATCH": the head of one communicator's block.
const Pattern& BlockHead() {
  static const Pattern kComm(R"((#\d+-\d+) \(([0-9a-fA-F]+)\) (\S+))");
  return kComm;
}

// "3,7" or "3, 7": the rank numbers of "The missing ranks:" and (2.24, 2.25)
// "The unknown ranks:" lines.
std::vector<RankRef> RankList(std::string ranks) {
  std::replace(ranks.begin(), ranks.end(), ',', ' ');
  std::vector<RankRef> out;
  for (const std::string& w : Words(ranks)) {
    RankRef r;
    r.rank = ToSmallInt(w);
    out.push_back(r);
  }
  return out;
}

struct LineParser {
  Report& report;
  enum Section { kPreamble, kJob, kComms, kErrors, kWarnings } section = kPreamble;
  Issue* issue = nullptr;
  std::string aspect;
  bool saw_table = false;
  bool saw_warnings = false;

  void Problem(size_t line_no, const std::string& what) {
    if (report.problems.size() < 20) {
      report.problems.push_back("line " + std::to_string(line_no) + ": " + what);
    }
  }

  void StartIssue(bool error, std::string kind) {
    report.issues.emplace_back();
    issue = &report.issues.back();
    issue->error = error;
    issue->kind = std::move(kind);
    aspect.clear();
  }

  RankGroup& Group() {
    if (issue->groups.empty()) issue->groups.push_back(RankGroup{aspect, 0, "", std::nullopt, {}});
    return issue->groups.back();
  }

  // A rank line inside a block: a member of the current group, a missing
  // rank, or a group of one ("Rank 3 has status INIT -- ...").
  void RankLine(std::string_view body) {
    static const Pattern kRank(R"(Rank (\d+)(?: (.*?))? -- (.*))");
    // 2.24, 2.25: a single rank RAS has no data from, "Rank 5 has status UNKNOWN".
    static const Pattern kBareRank(R"(Rank (\d+) (has .+|reported .+))");
    PatternMatch m;
    RankRef r;
    std::string_view number, state, owner;
    if (SplitRankLine(body, &number, &state, &owner)) {
      r.rank = ToSmallInt(std::string(number));
      r.state = std::string(state);
      ReadRankOwner(owner, &r);
    } else if (HasLineBreak(body) && kRank.Matches(body, &m)) {
      r.rank = ToSmallInt(m.str(1));
      r.state = m.str(2);
      ReadRankOwner(m.str(3), &r);
    } else if (kBareRank.Matches(body, &m)) {
      r.rank = ToSmallInt(m.str(1));
      r.state = m.str(2);
    } else {
      issue->details.emplace_back(body);
      return;
    }
    if (!r.state.empty()) {
      RankGroup g{aspect, 1, r.state, std::nullopt, {}};
      static const Pattern kOp(R"(has launched up to operation (\d+))");
      PatternMatch om;
      if (kOp.Matches(r.state, &om)) g.operation = ToInt(om.str(1));
      if (r.state == "has not launched any operations") g.operation = 0;
      // "has status INIT" -> "status INIT", as the groups say it.
      if (StartsWith(g.value, "has ")) g.value = g.value.substr(4);
      r.state.clear();  // the group's value says it
      g.ranks.push_back(r);
      issue->groups.push_back(std::move(g));
    } else if (!issue->groups.empty()) {
      issue->groups.back().ranks.push_back(r);
    } else {
      issue->ranks.push_back(r);
    }
  }

  void BlockLine(std::string_view body) {
    static const Pattern kCount(
        R"((?:Missing communicator data from|Encountered) (\d+) .*|(\d+) job process(?:es)? (?:is|are) considered dead.*)");
    static const Pattern kGroup(
        R"((\d+) ranks (?:have (launched up to operation (\d+)|not launched any operations|status \S+)|reported (.+)))");
    static const Pattern kMissing(R"(The missing ranks?: ([\d, ]+))");
    static const Pattern kUnknown(R"(The unknown ranks: ([\d, ]+))");
    static const Pattern kDifferent(R"(Communicator ranks have different (.+))");
    static const Pattern kErrorsOn(R"((Initialization|Asynchronous) errors? on (\d+) ranks?)");
    PatternMatch m;
    if (StartsWith(body, "Rank ")) {
      RankLine(body);
    } else if (ProcessLine().Matches(body, &m)) {
      issue->processes.push_back(ProcessRef{ToInt(m.str(1)).value_or(0), m.str(2), m.str(3)});
    } else if (kGroup.Matches(body, &m)) {
      RankGroup g{aspect, ToSmallInt(m.str(1)), "", std::nullopt, {}};
      if (m.matched(4)) {
        g.value = "reported " + m.str(4);
      } else {
        g.value = m.str(2);
        if (m.matched(3)) g.operation = ToInt(m.str(3));
        if (g.value == "not launched any operations") g.operation = 0;
      }
      issue->groups.push_back(std::move(g));
    } else if (kDifferent.Matches(body, &m)) {
      aspect = m.str(1);
      issue->details.emplace_back(body);
    } else if (kErrorsOn.Matches(body, &m)) {
      aspect = m.str(1) + " errors";
      issue->details.emplace_back(body);
      if (!issue->count) issue->count = ToSmallInt(m.str(2));
    } else if (kMissing.Matches(body, &m)) {
      for (RankRef& r : RankList(m.str(1))) issue->ranks.push_back(std::move(r));
    } else if (kUnknown.Matches(body, &m)) {
      // The members of the group just above ("3 ranks have status UNKNOWN").
      std::vector<RankRef>& to = issue->groups.empty() ? issue->ranks : issue->groups.back().ranks;
      for (RankRef& r : RankList(m.str(1))) to.push_back(std::move(r));
    } else {
      if (kCount.Matches(body, &m)) {
        issue->count = ToSmallInt(m.matched(1) ? m.str(1) : m.str(2));
      }
      issue->details.emplace_back(body);
    }
  }

  // A block's first line, unindented, in the Errors or Warnings section.
  void BlockStart(std::string_view line, bool error) {
    PatternMatch m;
    if (BlockHead().Matches(line, &m)) {
      StartIssue(error, m.str(3));
      issue->communicator = m.str(1);
      issue->comm_hash = m.str(2);
    } else if (line == "[...]") {
      // The documentation's elision.
    } else {
      StartIssue(error, std::string(line));
    }
  }

  void Line(size_t line_no, std::string_view raw) {
    std::string_view line = Trim(raw);
    if (line.empty() || line.find_first_not_of('=') == std::string_view::npos) return;
    if (StartsWith(line, "NCCL version ")) {
      std::vector<std::string> w = Words(line);
      if (w.size() >= 3) report.nccl_version = w[2];
      return;
    }
    if (line == "Job summary") {
      section = kJob;
      return;
    }
    if (StartsWith(line, "Communicators...")) {
      section = kComms;
      static const Pattern kTime(R"(\((\d+(?:\.\d+)?)s\))");
      PatternMatch m;
      if (kTime.Search(line, &m)) {
        report.collection_s = std::stod(m.str(1));
      }
      return;
    }
    if (line == "Errors" || line == "Warnings") {
      section = line == "Errors" ? kErrors : kWarnings;
      saw_warnings |= section == kWarnings;
      issue = nullptr;
      return;
    }
    // The table's header, also where a pasted excerpt starts with it.
    if (section <= kComms && StartsWith(line, "Group ") &&
        line.find("Status") != std::string_view::npos) {
      section = kComms;
      saw_table = true;
      return;
    }
    bool indented = raw.size() > 0 && (raw[0] == ' ' || raw[0] == '\t');
    switch (section) {
      case kPreamble:
        return;
      case kJob: {
        std::vector<std::string> w = Words(line);
        bool numeric = !w.empty();
        for (const std::string& x : w) numeric = numeric && ToInt(x).has_value();
        if (!numeric) {
          // An uneven job's "The outlier node(s):" list, and the RAS network's
          // "The missing processes:" list above the table (that part of the
          // report is compiled out in 2.24.3-2.30.7: `#if 0` in
          // rasClientRunInit).
          static const Pattern kOutlier(R"(Node (\S*) running process(?:es)? (.*))");
          PatternMatch m;
          if (kOutlier.Matches(line, &m)) {
            report.job.outlier_nodes.push_back(OutlierNode{m.str(1), m.str(2)});
          } else if (ProcessLine().Matches(line, &m)) {
            report.network_missing.push_back(
                ProcessRef{ToInt(m.str(1)).value_or(0), m.str(2), m.str(3)});
          }
          return;
        }
        JobSummary& j = report.job;
        if (w.size() == 5 && !j.nodes) {
          j.nodes = ToSmallInt(w[0]);
          j.processes_per_node = ToSmallInt(w[1]);
          j.gpus_per_process = ToSmallInt(w[2]);
          j.processes = ToSmallInt(w[3]);
          j.gpus = ToSmallInt(w[4]);
        } else if (w.size() == 3) {
          // Uneven jobs print a (total) row of nodes, processes, GPUs last.
          j.nodes = ToSmallInt(w[0]);
          j.processes = ToSmallInt(w[1]);
          j.gpus = ToSmallInt(w[2]);
        }
        return;
      }
      case kComms: {
        if (StartsWith(line, "#  in group")) return;
        if (!indented && BlockHead().Matches(line)) {
          // An excerpt that elides the section header ("[...]" in NCCL's
          // documentation): a MISMATCH block belongs to the warnings.
          section = line.substr(line.rfind(' ') + 1) == "MISMATCH" ? kWarnings : kErrors;
          BlockStart(line, section == kErrors);
          return;
        }
        if (line == "No communicator data collected!") {
          saw_table = true;
          return;
        }
        std::vector<std::string> w = Words(line);
        if (w.size() == 8 && ToInt(w[0])) {
          CommGroupRow row;
          row.group = ToSmallInt(w[0]);
          row.comms = ToSmallInt(w[1]);
          row.nodes_per_comm = ToSmallInt(w[2]);
          row.ranks_per_node = w[3];
          row.ranks_per_comm = ToSmallInt(w[4]);
          row.ranks_in_group = ToSmallInt(w[5]);
          row.status = w[6];
          row.errors = w[7];
          report.groups.push_back(row);
        } else if (w.empty() || w[0] != "[...]") {
          Problem(line_no,
                  "not a row of the communicators table: " + std::string(line.substr(0, 80)));
        }
        return;
      }
      case kErrors:
      case kWarnings: {
        if (!indented) {
          BlockStart(line, section == kErrors);
          return;
        }
        if (!issue) {
          Problem(line_no, "a block line before any block: " + std::string(line.substr(0, 80)));
          return;
        }
        BlockLine(line);
        return;
      }
    }
  }
};

}  // namespace

namespace {

// Where the report of a saved session starts: past a UTF-8 byte order mark
// (a report saved from a Windows editor), blank lines and the protocol's own
// answers ("SERVER PROTOCOL 2" to CLIENT PROTOCOL, "OK" to TIMEOUT and SET
// FORMAT), which `echo ... | nc localhost 28028 > f` keeps.
size_t ReportStart(std::string_view text) {
  size_t at = StartsWith(text, "\xEF\xBB\xBF") ? 3 : 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    std::string_view line = Trim(text.substr(at, end == text.npos ? text.npos : end - at));
    if (!line.empty() && line != "OK" && !StartsWith(line, "SERVER PROTOCOL ")) break;
    if (end == text.npos) return text.size();
    at = end + 1;
  }
  return at;
}

}  // namespace

bool LooksLikeJson(std::string_view text) {
  size_t i = text.find_first_not_of(" \t\r\n", ReportStart(text));
  return i != std::string_view::npos && text[i] == '{';
}

Report ParseRasReport(std::string_view text) {
  bool json = LooksLikeJson(text);
  size_t start = ReportStart(text);
  // `ncclras >> f` run more than once: the text reports one after another,
  // each from its "NCCL version" line. The last (newest) is the one judged.
  int reports = 0;
  size_t last = start;
  for (size_t at = start; !json && at < text.size();) {
    if (StartsWith(text.substr(at), "NCCL version ")) {
      ++reports;
      last = at;
    }
    size_t end = text.find('\n', at);
    if (end == text.npos) break;
    at = end + 1;
  }
  if (reports > 1) start = last;
  // Nothing before the report (`ncclras > f`): read in place, not copied
  // (a JSON report of 10^5 ranks is tens of MB).
  if (start == 0) return json ? ParseRasJson(text) : ParseRasText(text);
  // What comes before becomes blank lines: the parsers' line numbers stay
  // the file's.
  std::string kept(text.substr(0, start));
  for (char& c : kept) {
    if (c != '\n') c = ' ';
  }
  size_t first_line = 1 + static_cast<size_t>(std::count(kept.begin(), kept.end(), '\n'));
  kept.append(text.substr(start));
  Report r = json ? ParseRasJson(kept) : ParseRasText(kept);
  if (reports > 1) {
    r.earlier_reports = reports - 1;
    r.first_line = first_line;
  }
  return r;
}

Report ParseRasText(std::string_view text) {
  Report report;
  report.format = "text";
  LineParser p{report};
  size_t line_no = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    std::string_view line =
        text.substr(start, end == std::string_view::npos ? text.npos : end - start);
    ++line_no;
    if (line.size() > 1024) {
      p.Problem(line_no, "line longer than 1024 characters skipped");
    } else {
      p.Line(line_no, line);
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  bool ends_with_newline = !text.empty() && text.back() == '\n';
  report.complete = p.saw_table && p.saw_warnings && ends_with_newline;
  if (text.empty()) {
    report.problems.push_back("the reply is empty");
  } else if (!p.saw_table) {
    report.problems.push_back("line " + std::to_string(line_no) +
                              ": the reply ends before the communicators table");
  } else if (!p.saw_warnings) {
    report.problems.push_back("line " + std::to_string(line_no) +
                              ": the reply ends before its Warnings section (the RAS thread "
                              "stopped mid-report?)");
  } else if (!ends_with_newline) {
    report.problems.push_back("line " + std::to_string(line_no) + ": the reply ends mid-line");
  }
  return report;
}

}  // namespace fabtrack::ras

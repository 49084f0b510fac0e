// fabtrack ras read FILE|- [--format text|json] [--verbose]
// Judges a saved NCCL RAS report (`ncclras > hang.txt`, `ncclras -f json >
// hang.json`, or an `echo verbose status | nc localhost 28028` session, as
// operators attach them to tickets) exactly as `ras status` judges a live
// one: the format detected, the same verdict, output and exit codes: 0
// healthy, 1 warning, 2 critical, 3 no whole report (the file cannot be read,
// is empty, or is cut short or broken: "FILE:LINE: what").
#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/ras_report_output.h"
#include "collector/ras/ras_client.h"

namespace fabtrack::cli {
namespace {

constexpr int kExitNoWholeReport = 3;
// The cap `ras status` puts on a live reply (ras_client.h).
constexpr size_t kMaxReportBytes = ras::kMaxReplyBytes;

struct RasReadOptions {
  std::string path;
  std::string format = "text";
  bool verbose = false;
};

[[noreturn]] void ReadFailed(const std::string& what) {
  std::cerr << "fabtrack ras read: " << what << "\n";
  throw CommandExit{kExitNoWholeReport};
}

// The file's bytes, or "-" standard input's; the I/O edge of the command.
std::string ReadReportFile(const std::string& path, const std::string& name) {
  auto too_large = [&] {
    // A JSON report passes it near 990,000 rank entries; the text one much later.
    ReadFailed(name + ": larger than " + std::to_string(kMaxReportBytes >> 20) +
               " MiB, the cap on a live RAS reply: not read (the text report, ncclras "
               "without -f json, is far smaller)");
  };
  std::ifstream file;
  std::istream* in = &std::cin;
  std::string body;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file) ReadFailed(name + ": cannot read: " + std::strerror(errno));
    in = &file;
    // A file's size is known: refused before a byte is read, and read into
    // one allocation, not a string doubled on the way.
    struct stat st {};
    if (stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      if (static_cast<uint64_t>(st.st_size) > kMaxReportBytes) too_large();
      body.reserve(static_cast<size_t>(st.st_size));
    }
  }
  char chunk[65536];
  while (in->read(chunk, sizeof(chunk)) || in->gcount() > 0) {
    if (body.size() >= (size_t{32} << 20) && body.capacity() < kMaxReportBytes) {
      // A big report on standard input: room for the cap at once (as a live
      // reply), not a string doubled to twice the cap.
      body.reserve(kMaxReportBytes + sizeof(chunk));
    }
    body.append(chunk, static_cast<size_t>(in->gcount()));
    if (body.size() > kMaxReportBytes) too_large();
  }
  if (in->bad()) ReadFailed(name + ": cannot read: " + std::strerror(errno));
  return body;
}

void RunRasRead(const RasReadOptions& o) {
  std::string name = o.path == "-" ? "<stdin>" : o.path;
  std::string body = ReadReportFile(o.path, name);
  if (body.find_first_not_of(" \t\r\n") == std::string::npos) {
    ReadFailed(name + ":1: empty: no RAS report in it");
  }
  ras::Report report = ras::ParseRasReport(body);
  if (report.earlier_reports > 0) {
    std::cerr << "fabtrack ras read: " << name << " holds " << report.earlier_reports + 1
              << " reports; the last, from line " << report.first_line << ", is judged\n";
  }
  if (!report.complete) {
    // The parsers say "line N: what"; a file's reader wants "FILE:N: what".
    std::string why = report.problems.empty() ? "not read whole" : report.problems.front();
    if (why.rfind("line ", 0) == 0) {
      ReadFailed(name + ":" + why.substr(5));
    }
    ReadFailed(name + ": " + why);
  }
  ras::Verdict v = ras::Judge(report);
  RasReportSource source{"RAS report " + name, {{"file", name}}};
  if (o.format == "json") {
    PrintRasVerdictJson(source, report, report.format, body, v, o.verbose);
  } else {
    PrintRasVerdictText(source, report, report.format, body, v, o.verbose);
  }
  if (v.health != ras::Health::kHealthy) throw CommandExit{static_cast<int>(v.health)};
}

}  // namespace

void SetupRasRead(CLI::App* ras) {
  auto o = std::make_shared<RasReadOptions>();
  CLI::App* read = ras->add_subcommand(
      "read",
      "Judge a saved RAS report (ncclras's output, text or JSON, or an nc session; - for "
      "standard input) as `ras status` judges a live one. Exit 0 healthy, 1 warning, "
      "2 critical, 3 no whole report (unreadable, empty or cut short: FILE:LINE)");
  read->add_option("file", o->path, "the saved report, or - for standard input")->required();
  AddFormatOption(read, &o->format, {"text", "json"});
  read->add_flag("--verbose", o->verbose, "print the report itself after the summary");
  read->callback([o] { RunRasRead(*o); });
}

}  // namespace fabtrack::cli

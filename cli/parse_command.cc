// fabtrack parse FILE... [--format json|text]
#include <iostream>

#include "cli/commands.h"
#include "collector/parse/parse_file.h"
#include "collector/parse/parsed_file_json.h"

namespace fabtrack::cli {
namespace {

struct ParseOptions {
  std::vector<std::string> files;
  std::string format = "json";
};

void PrintSummary(const ParsedFile& p) {
  std::cout << p.file << ": " << p.tests.size() << " table(s)";
  if (p.log.nccl_version) std::cout << ", NCCL " << *p.log.nccl_version;
  if (p.log.network) std::cout << ", network " << *p.log.network;
  auto transports = p.Transports();
  if (!transports.empty()) {
    std::cout << ", transports";
    for (const auto& t : transports) std::cout << " " << t;
  }
  if (auto g = p.Gdrdma()) std::cout << ", GDRDMA " << (*g ? "on" : "off");
  std::cout << "\n";
  for (const TestTable& t : p.tests) {
    std::cout << "  " << t.collective.value_or("?") << ": " << t.rows.size() << " sizes, "
              << (t.ranks ? std::to_string(*t.ranks) : "?") << " ranks on " << t.hosts.size()
              << " host(s)";
    if (t.avg_busbw) std::cout << ", avg busbw " << *t.avg_busbw << " GB/s";
    std::cout << (t.complete ? "" : " (incomplete)") << "\n";
  }
}

void RunParse(const ParseOptions& o) {
  nlohmann::json out = nlohmann::json::array();
  bool any_unusable = false;
  for (const std::string& file : o.files) {
    ParsedFile parsed = ParsePath(file);
    for (const ParseError& e : parsed.errors) {
      std::cerr << file << ":" << e.line << ": " << e.message << "\n";
    }
    if (!parsed.Usable()) {
      any_unusable = true;
      if (parsed.errors.empty()) {
        std::cerr << file << ": no nccl-tests table or NCCL log lines found\n";
      }
    }
    if (o.format == "json") {
      out.push_back(ParsedFileToJson(parsed));
    } else {
      PrintSummary(parsed);
    }
  }
  if (o.format == "json") {
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  if (any_unusable) throw CommandExit{kExitInputError};
}

}  // namespace

void SetupParse(CLI::App& app) {
  auto options = std::make_shared<ParseOptions>();
  CLI::App* parse = app.add_subcommand(
      "parse", "Parse nccl-tests outputs (text or -J JSON) and NCCL_DEBUG=INFO logs; no database");
  parse->add_option("files", options->files, "files to parse")->required();
  parse->add_option("--format", options->format, "json (default) or text")
      ->check(CLI::IsMember({"json", "text"}));
  parse->callback([options] { RunParse(*options); });
}

}  // namespace fabtrack::cli

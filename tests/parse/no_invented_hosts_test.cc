// Property (issue 16): no host name is ever produced that is not a host in
// the input, for every fixture and for mutations of it (excerpts cut at both
// ends, host prefixes stripped, lines of two files interleaved, two lines
// run together). A host "in the input" is loosely what a reader would call
// one: the run of host characters before ":pid:tid [", or the word after
// "on" in an nccl-tests "#  Rank" line.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "collector/parse/parse_file.h"

namespace fabtrack {
namespace {

bool HostChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ||
         c == '<' || c == '>' || c == '*';
}

std::set<std::string> HostsInInput(const std::string& text) {
  std::set<std::string> hosts;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != ':') continue;
    // ":pid:tid [" after the host.
    size_t j = i + 1, k;
    for (k = j; k < text.size() && std::isdigit(static_cast<unsigned char>(text[k])); ++k) {
    }
    if (k == j || k >= text.size() || text[k] != ':') continue;
    size_t m;
    for (m = k + 1; m < text.size() && std::isdigit(static_cast<unsigned char>(text[m])); ++m) {
    }
    if (m == k + 1 || text.compare(m, 2, " [") != 0) continue;
    size_t start = i;
    while (start > 0 && HostChar(text[start - 1])) --start;
    hosts.insert(text.substr(start, i - start));
  }
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find("Rank") == std::string::npos) continue;
    std::istringstream words(line);
    std::string word, previous;
    while (words >> word) {
      if (previous == "on") hosts.insert(word);
      previous = word;
    }
  }
  return hosts;
}

std::vector<std::string> HostsProduced(const ParsedFile& parsed) {
  std::vector<std::string> hosts = parsed.log.hosts;
  for (const NetDevice& d : parsed.log.net_devices) hosts.push_back(d.host);
  for (const ChannelObservation& c : parsed.log.channels) hosts.push_back(c.host);
  for (const LogMessage& w : parsed.log.warnings) hosts.push_back(w.host);
  for (const CommRank& r : parsed.log.comm_ranks) hosts.push_back(r.host);
  for (const TestTable& t : parsed.tests) {
    hosts.insert(hosts.end(), t.hosts.begin(), t.hosts.end());
    for (const RankDevice& d : t.devices) hosts.push_back(d.host);
  }
  hosts.erase(std::remove(hosts.begin(), hosts.end(), ""), hosts.end());
  return hosts;
}

void ExpectNoInventedHost(const std::string& text, const std::string& what) {
  ParsedFile parsed = ParseText(text, what);
  std::set<std::string> allowed = HostsInInput(text);
  for (const std::string& host : HostsProduced(parsed)) {
    ASSERT_TRUE(allowed.count(host)) << what << ": invented host \"" << host << "\"";
  }
}

// Text fixtures (JSON documents name hosts in their own fields).
std::vector<std::pair<std::string, std::string>> TextFixtures() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(FABTRACK_FIXTURE_DIR)) {
    if (!entry.is_regular_file() || entry.file_size() > (1 << 20)) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    std::string s = text.str();
    if (s.find('\0') != std::string::npos) continue;
    size_t first = s.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && s[first] == '{') continue;
    out.emplace_back(entry.path().string(), s);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

TEST(NoInventedHostsTest, EveryFixtureAsIs) {
  std::vector<std::pair<std::string, std::string>> fixtures = TextFixtures();
  ASSERT_GT(fixtures.size(), 20u);
  for (const auto& [path, text] : fixtures) ExpectNoInventedHost(text, path);
}

TEST(NoInventedHostsTest, MutatedFixtures) {
  std::vector<std::pair<std::string, std::string>> fixtures = TextFixtures();
  std::mt19937 rng(16);  // fixed: a failure reproduces
  auto pick = [&](size_t n) {
    return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng);
  };
  for (const auto& [path, text] : fixtures) {
    for (int round = 0; round < 12; ++round) {
      // An excerpt: cut at both ends, anywhere.
      size_t from = pick(text.size() / 2 + 1);
      size_t to = from + pick(text.size() - from + 1);
      ExpectNoInventedHost(text.substr(from, to - from), path + " cut");

      // Host prefixes stripped from some lines (everything before "NCCL ").
      std::vector<std::string> lines = Lines(text);
      for (std::string& line : lines) {
        size_t at = line.find("NCCL ");
        if (at != std::string::npos && pick(2) == 0) line = line.substr(at);
      }
      ExpectNoInventedHost(Join(lines), path + " stripped");

      // Interleaved with another fixture, and two lines run together.
      const std::string& other = fixtures[pick(fixtures.size())].second;
      std::vector<std::string> a = Lines(text), b = Lines(other), mixed;
      size_t i = 0, j = 0;
      while (i < a.size() || j < b.size()) {
        bool take_a = j >= b.size() || (i < a.size() && pick(2) == 0);
        mixed.push_back(take_a ? a[i++] : b[j++]);
      }
      if (mixed.size() > 1) {
        size_t k = pick(mixed.size() - 1);
        mixed[k] = mixed[k].substr(0, pick(mixed[k].size() + 1)) + mixed[k + 1];
        mixed.erase(mixed.begin() + static_cast<long>(k) + 1);
      }
      ExpectNoInventedHost(Join(mixed), path + " interleaved");
    }
  }
}

}  // namespace
}  // namespace fabtrack

#include "collector/parse/proc_cpu_parser.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "core/text.h"

namespace fabtrack {
namespace {

template <typename T>
bool ToNumber(std::string_view text, T* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::optional<ProcStat> ParseProcStat(std::string_view text, std::string* why) {
  ProcStat stat;
  bool aggregate = false;
  int line_number = 0;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    ++line_number;
    if (line.rfind("cpu", 0) != 0) continue;
    std::vector<std::string_view> f = SplitBlanks(line);
    if (f.empty()) continue;
    if (f[0] != "cpu") {
      int index = 0;
      if (ToNumber(f[0].substr(3), &index)) ++stat.cpus;
      continue;
    }
    if (f.size() < 5) {
      *why = "/proc/stat:" + std::to_string(line_number) +
             ": the cpu line has fewer than 4 fields (user nice system idle)";
      return std::nullopt;
    }
    int64_t* slots[] = {&stat.times.user,    &stat.times.nice,   &stat.times.system,
                        &stat.times.idle,    &stat.times.iowait, &stat.times.irq,
                        &stat.times.softirq, &stat.times.steal};
    for (size_t i = 1; i < f.size() && i <= 8; ++i) {
      if (!ToNumber(f[i], slots[i - 1]) || *slots[i - 1] < 0) {
        *why = "/proc/stat:" + std::to_string(line_number) + ": field " + std::to_string(i) +
               " of the cpu line is not a count: '" + std::string(f[i]) + "'";
        return std::nullopt;
      }
    }
    aggregate = true;
  }
  if (!aggregate) {
    *why = "/proc/stat:1: no aggregate cpu line";
    return std::nullopt;
  }
  return stat;
}

std::optional<LoadAverage> ParseLoadavg(std::string_view text, std::string* why) {
  std::vector<std::string_view> f = SplitBlanks(text.substr(0, text.find('\n')));
  LoadAverage load;
  size_t slash = f.size() >= 4 ? f[3].find('/') : std::string_view::npos;
  // from_chars for double is there since GCC 11; the loads are short decimals.
  auto to_double = [](std::string_view s, double* out) {
    std::string copy(s);
    char* end = nullptr;
    *out = std::strtod(copy.c_str(), &end);
    return end && *end == '\0' && !copy.empty() && std::isfinite(*out) && *out >= 0;
  };
  if (f.size() < 4 || slash == std::string_view::npos || !to_double(f[0], &load.load1) ||
      !to_double(f[1], &load.load5) || !to_double(f[2], &load.load15) ||
      !ToNumber(f[3].substr(0, slash), &load.runnable) ||
      !ToNumber(f[3].substr(slash + 1), &load.threads)) {
    *why = "/proc/loadavg:1: expected \"LOAD1 LOAD5 LOAD15 RUNNABLE/THREADS LASTPID\", got '" +
           std::string(text.substr(0, text.find('\n'))) + "'";
    return std::nullopt;
  }
  return load;
}

std::optional<ProcPidStat> ParseProcPidStat(std::string_view text, std::string* why) {
  ProcPidStat p;
  const size_t open = text.find('(');
  const size_t close = text.rfind(')');
  const std::vector<std::string_view> head = open == std::string_view::npos
                                                 ? std::vector<std::string_view>()
                                                 : SplitBlanks(text.substr(0, open));
  if (close == std::string_view::npos || close < open || head.size() != 1 ||
      !ToNumber(head[0], &p.pid)) {
    *why = "stat:1: expected \"PID (COMM) STATE ...\"";
    return std::nullopt;
  }
  // A command name is any 15 bytes; kept as printable ASCII (JSON wants text).
  p.comm = std::string(text.substr(open + 1, close - open - 1));
  for (char& c : p.comm) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  // Fields after the comm: field 3 (state) is rest[0], field N is rest[N-3].
  std::vector<std::string_view> rest =
      SplitBlanks(text.substr(close + 1, text.find('\n', close) - close - 1));
  if (rest.size() < 20 || rest[0].size() != 1) {
    *why = "stat:1: " + std::to_string(rest.size() + 2) + " fields, expected at least 22";
    return std::nullopt;
  }
  p.state = rest[0][0];
  if (!ToNumber(rest[1], &p.ppid) || !ToNumber(rest[6], &p.flags) ||
      !ToNumber(rest[11], &p.utime) || !ToNumber(rest[12], &p.stime) ||
      !ToNumber(rest[19], &p.start_ticks)) {
    *why = "stat:1: ppid, flags, utime, stime or starttime (fields 4, 9, 14, 15, 22) not a number";
    return std::nullopt;
  }
  return p;
}

}  // namespace fabtrack

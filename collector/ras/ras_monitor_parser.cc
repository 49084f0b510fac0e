// The formats are NCCL's rasClientsNotifyEvent (src/ras/client_support.cc,
// 2.29.2-2.30.7, unchanged across them) and rasPeerInfoToString /
// rasPeerToString (src/ras/peers.cc) for the text form's peer.
#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "collector/ras/ras_monitor.h"

namespace fabtrack::ras {
namespace {

constexpr size_t kMaxEvent = 64 * 1024;  // NCCL formats an event into 2 KiB
constexpr int kMaxProblems = 100;        // per stream: a stream of garbage says so, not forever

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string Shown(std::string_view s) {
  std::string out(s.substr(0, 120));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return "\"" + out + (s.size() > 120 ? "...\"" : "\"");
}

// "10.1.0.7<36871>" (ncclSocketToString: RAS knew the address, not the
// process) -> node, port.
bool SplitAddress(std::string_view token, std::string* node, std::string* port) {
  size_t lt = token.find('<');
  if (lt == 0 || lt == std::string_view::npos || token.back() != '>') return false;
  std::string_view p = token.substr(lt + 1, token.size() - lt - 2);
  if (p.empty()) return false;
  for (char c : p) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  *node = std::string(token.substr(0, lt));
  *port = std::string(p);
  return true;
}

size_t Digits(std::string_view s, bool commas) {
  size_t i = 0;
  while (i < s.size() &&
         (std::isdigit(static_cast<unsigned char>(s[i])) || (commas && s[i] == ',')))
    ++i;
  return i;
}

// "Process 4242 on node 10.1.0.7 managing GPU 1 (NVML 3) details..." ->
// the event's peer and details; false when `rest` is not in that form.
bool ReadProcess(std::string_view rest, RasEvent* e) {
  constexpr std::string_view kProcess = "Process ", kOn = " on node ", kManaging = " managing GPU";
  if (!StartsWith(rest, kProcess)) return false;
  rest.remove_prefix(kProcess.size());
  size_t n = Digits(rest, false);
  if (n == 0 || n > 18) return false;
  int64_t pid = std::stoll(std::string(rest.substr(0, n)));
  rest.remove_prefix(n);
  if (!StartsWith(rest, kOn)) return false;
  rest.remove_prefix(kOn.size());
  size_t managing = rest.find(kManaging);
  if (managing == 0 || managing == std::string_view::npos) return false;
  std::string node(rest.substr(0, managing));
  if (node.find(' ') != std::string::npos) return false;
  rest.remove_prefix(managing + kManaging.size());
  if (StartsWith(rest, "s")) rest.remove_prefix(1);  // "GPUs 0,1"
  if (!StartsWith(rest, " ")) return false;
  rest.remove_prefix(1);
  n = Digits(rest, true);
  std::string gpus(rest.substr(0, n));
  rest.remove_prefix(n);
  if (StartsWith(rest, " (NVML ")) {
    size_t close = rest.find(')');
    if (close == std::string_view::npos) return false;
    gpus += std::string(rest.substr(0, close + 1));
    rest.remove_prefix(close + 1);
  }
  if (!rest.empty() && rest.front() != ' ') return false;
  e->pid = pid;
  e->node = std::move(node);
  e->gpus = std::move(gpus);
  e->details = std::string(Trim(rest));
  return true;
}

std::string DevList(const nlohmann::json& a) {
  std::string out;
  for (const nlohmann::json& d : a) out += (out.empty() ? "" : ",") + std::to_string(d.get<int>());
  return out;
}

// The event as text PostgreSQL takes and nlohmann writes: a byte that is not
// part of valid UTF-8 (a garbled stream) and NUL (JSON's \u0000) become
// U+FFFD. Kept as they came, one such event ended `ras watch` (the spool's
// JSON threw, the database refused the row) and the watch's verdict was lost.
std::string TextOnly(const std::string& s) {
  auto plain = [](char c) { return c != '\0' && static_cast<unsigned char>(c) < 0x80; };
  if (std::all_of(s.begin(), s.end(), plain)) return s;
  constexpr const char* kReplacement = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(s.size() + 8);
  size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (plain(s[i])) {
      out += s[i++];
      continue;
    }
    // The length of the sequence `b` starts and the range of its second
    // byte (no overlong forms, no surrogates, nothing past U+10FFFF).
    size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) {
      n = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
      n = 3;
      if (b == 0xE0) lo = 0xA0;
      if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      n = 4;
      if (b == 0xF0) lo = 0x90;
      if (b == 0xF4) hi = 0x8F;
    }
    bool ok = n > 0 && i + n <= s.size();
    for (size_t k = 1; ok && k < n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      ok = k == 1 ? (c >= lo && c <= hi) : (c >= 0x80 && c <= 0xBF);
    }
    if (ok) {
      out.append(s, i, n);
      i += n;
    } else {
      out += kReplacement;
      ++i;
    }
  }
  return out;
}

void Push(MonitorBatch* out, RasEvent e) {
  for (std::string* field :
       {&e.event_time, &e.group, &e.event, &e.node, &e.port, &e.gpus, &e.details, &e.raw}) {
    *field = TextOnly(*field);
  }
  out->events.push_back(std::move(e));
}

}  // namespace

const char* MonitorEventGroup(std::string_view event) {
  // peers.cc: a process joins or is declared dead.
  if (event == "PEER_NEW" || event == "PEER_DEAD") return "LIFECYCLE";
  // ras.cc and rasnet.cc: the RAS network's connections with its peers.
  for (const char* e : {"PEER_CONNECTING", "PEER_CONNECTED", "PEER_RECOVERED", "PEER_DISCONNECTED",
                        "PEER_UNRESPONSIVE", "PEER_RETRY", "PEER_TIMEOUT_DEAD", "PEER_SEND_STUCK",
                        "PEER_INIT_TIMEOUT", "PEER_KEEPALIVE_TIMEOUT"}) {
    if (event == e) return "TRACE";
  }
  return "";
}

namespace {

void Problem(MonitorBatch* out, int* count, std::string what) {
  if (*count < kMaxProblems) {
    out->problems.push_back(std::move(what));
  } else if (*count == kMaxProblems) {
    out->problems.push_back("more problems not listed");
  }
  ++*count;
}

}  // namespace

void MonitorParser::TextLine(std::string_view line, int number, MonitorBatch* out) {
  line = Trim(line);
  if (line.empty()) return;
  // ncclras prints a banner on its stderr; a saved console capture has it.
  if (StartsWith(line, "RAS Monitor Mode") || line.find_first_not_of('=') == std::string::npos) {
    return;
  }
  RasEvent e;
  e.format = "text";
  e.line = number;
  e.raw = std::string(line.substr(0, kMaxEvent));
  size_t close = line.find(']');
  size_t colon = close == std::string_view::npos ? close : line.find(':', close);
  bool ok = StartsWith(line, "[") && close != std::string_view::npos && close + 1 < line.size() &&
            line[close + 1] == ' ' && colon != std::string_view::npos && colon > close + 2;
  if (ok) {
    e.event = std::string(line.substr(close + 2, colon - close - 2));
    for (char c : e.event) {
      ok &= std::isupper(static_cast<unsigned char>(c)) ||
            std::isdigit(static_cast<unsigned char>(c)) || c == '_';
    }
  }
  if (!ok) {
    Problem(out, &problem_total_,
            "line " + std::to_string(number) + ": not a RAS monitor event: " + Shown(line));
    return;
  }
  e.event_time = std::string(line.substr(1, close - 1));
  std::string_view rest = Trim(line.substr(colon + 1));
  if (!ReadProcess(rest, &e)) {
    std::string_view token = rest.substr(0, rest.find(' '));
    if (!token.empty() && SplitAddress(token, &e.node, &e.port)) rest.remove_prefix(token.size());
    e.details = std::string(Trim(rest));
  }
  e.group = MonitorEventGroup(e.event);
  e.known = !e.group.empty();
  Push(out, std::move(e));
}

void MonitorParser::JsonObject(std::string_view text, int number, MonitorBatch* out) {
  std::string where = "line " + std::to_string(number) + ": ";
  RasEvent e;
  e.format = "json";
  e.line = number;
  e.raw = std::string(text);
  try {
    nlohmann::json j = nlohmann::json::parse(text);
    if (!j.is_object() || !j.contains("event") || !j["event"].is_string()) {
      Problem(out, &problem_total_, where + "a JSON object without an \"event\": " + Shown(text));
      return;
    }
    e.event = j["event"].get<std::string>();
    if (j.contains("timestamp")) e.event_time = j["timestamp"].get<std::string>();
    if (j.contains("group")) e.group = j["group"].get<std::string>();
    if (j.contains("details")) e.details = j["details"].get<std::string>();
    if (j.contains("peer")) {
      const nlohmann::json& p = j["peer"];
      if (!p.is_object()) {
        Problem(out, &problem_total_, where + "\"peer\" is not an object: " + Shown(text));
        return;
      }
      if (p.contains("host")) e.node = p["host"].get<std::string>();
      if (p.contains("addr")) {
        std::string addr = p["addr"].get<std::string>();
        if (!SplitAddress(addr, &e.node, &e.port)) e.node = addr;
      }
      if (p.contains("pid")) e.pid = p["pid"].get<int64_t>();
      if (p.contains("cuda_devs")) {
        e.gpus = DevList(p["cuda_devs"]);
        std::string nvml = p.contains("nvml_devs") ? DevList(p["nvml_devs"]) : e.gpus;
        if (nvml != e.gpus) e.gpus += " (NVML " + nvml + ")";  // as the text form prints it
      }
    }
  } catch (const nlohmann::json::exception& x) {
    Problem(out, &problem_total_, where + "not a readable JSON event (" + x.what() + ")");
    return;
  }
  if (e.group.empty()) e.group = MonitorEventGroup(e.event);
  e.known = *MonitorEventGroup(e.event) != '\0';
  Push(out, std::move(e));
}

void MonitorParser::Feed(std::string_view chunk, MonitorBatch* out) {
  if (format_ != "json") {
    size_t start = 0;
    for (;;) {
      size_t nl = chunk.find('\n', start);
      std::string_view piece = chunk.substr(start, nl == std::string_view::npos ? nl : nl - start);
      if (!skipping_) {
        if (pending_.size() + piece.size() > kMaxEvent) {
          Problem(out, &problem_total_,
                  "line " + std::to_string(line_) + ": longer than 64 KiB, skipped");
          pending_.clear();
          skipping_ = true;
        } else {
          pending_.append(piece);
        }
      }
      if (nl == std::string_view::npos) break;
      if (!skipping_) {
        if (!pending_.empty() && pending_.back() == '\r') pending_.pop_back();
        TextLine(pending_, line_, out);
      }
      pending_.clear();
      skipping_ = false;
      ++line_;
      start = nl + 1;
    }
    return;
  }
  // JSON: objects found by their braces (outside strings), whatever their
  // layout; between them only blanks are expected.
  for (char c : chunk) {
    if (depth_ == 0) {
      if (c == '{') {
        depth_ = 1;
        in_string_ = escaped_ = false;
        pending_ = "{";
        pending_line_ = line_;
        skipping_ = false;
        continue;
      }
      if (c == '\n') {
        if (!junk_.empty()) {
          Problem(out, &problem_total_,
                  "line " + std::to_string(line_) + ": not a JSON event: " + Shown(Trim(junk_)));
          junk_.clear();
        }
        ++line_;
      } else if (!std::isspace(static_cast<unsigned char>(c)) || !junk_.empty()) {
        if (junk_.size() < 200) junk_ += c;
      }
      continue;
    }
    if (c == '\n') ++line_;
    if (!skipping_) {
      pending_ += c;
      if (pending_.size() > kMaxEvent) {
        Problem(out, &problem_total_,
                "line " + std::to_string(pending_line_) + ": an event longer than 64 KiB, skipped");
        pending_.clear();
        skipping_ = true;
      }
    }
    if (in_string_) {
      if (escaped_) {
        escaped_ = false;
      } else if (c == '\\') {
        escaped_ = true;
      } else if (c == '"') {
        in_string_ = false;
      }
      continue;
    }
    if (c == '"') {
      in_string_ = true;
    } else if (c == '{') {
      ++depth_;
    } else if (c == '}' && --depth_ == 0) {
      if (!skipping_) JsonObject(pending_, pending_line_, out);
      pending_.clear();
      skipping_ = false;
    }
  }
}

void MonitorParser::Finish(MonitorBatch* out) {
  if (format_ != "json") {
    if (!skipping_ && !Trim(pending_).empty()) {
      Problem(out, &problem_total_,
              "line " + std::to_string(line_) +
                  ": the stream ended mid-line (cut off), not read: " + Shown(pending_));
    }
  } else if (depth_ > 0) {
    Problem(out, &problem_total_,
            "line " + std::to_string(pending_line_) +
                ": the stream ended inside an event (cut off), not read: " + Shown(pending_));
  } else if (!junk_.empty()) {
    Problem(out, &problem_total_,
            "line " + std::to_string(line_) + ": not a JSON event: " + Shown(Trim(junk_)));
  }
  pending_.clear();
  junk_.clear();
  depth_ = 0;
  skipping_ = false;
}

MonitorBatch ParseMonitorStream(std::string_view text, const std::string& format) {
  MonitorParser p(format);
  MonitorBatch out;
  p.Feed(text, &out);
  p.Finish(&out);
  return out;
}

}  // namespace fabtrack::ras

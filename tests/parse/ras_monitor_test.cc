// NCCL's RAS event stream (collector/ras/ras_monitor.h): every event NCCL
// 2.29-2.30 sends, in both formats and each peer form, written here the way
// rasClientsNotifyEvent formats them (src/ras/client_support.cc) with our
// own values; the stream cut at every byte; malformed, cut-off and oversized
// input named by line; events NCCL does not send yet kept.
#include "collector/ras/ras_monitor.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "tests/support/fixture_text.h"

namespace fabtrack::ras {
namespace {

enum class Peer { kProcess, kAddress, kNone };

struct Row {
  const char* event;
  const char* group;  // what NCCL sends it in; "" for an event it does not send
  Peer peer;
  int64_t pid;
  const char* node;
  const char* port;
  std::vector<int> cuda, nvml;
  const char* details;
};

const std::vector<Row>& Rows() {
  static const std::vector<Row> rows = {
      {"PEER_NEW", "LIFECYCLE", Peer::kProcess, 7301, "10.77.0.12", "", {2}, {2}, ""},
      {"PEER_DEAD", "LIFECYCLE", Peer::kProcess, 6103, "10.77.0.12", "", {1}, {3}, ""},
      {"PEER_DEAD", "LIFECYCLE", Peer::kAddress, 0, "10.77.0.13", "28112", {}, {}, ""},
      {"PEER_CONNECTING", "TRACE", Peer::kProcess, 6200, "10.77.0.14", "", {0, 1}, {0, 1}, ""},
      {"PEER_CONNECTED",
       "TRACE",
       Peer::kProcess,
       6201,
       "10.77.0.14",
       "",
       {2},
       {2},
       "connection established successfully"},
      {"PEER_RECOVERED",
       "TRACE",
       Peer::kAddress,
       0,
       "10.77.0.15",
       "28028",
       {},
       {},
       "peer responding again"},
      {"PEER_DISCONNECTED",
       "TRACE",
       Peer::kProcess,
       6202,
       "10.77.0.16",
       "",
       {3},
       {3},
       "peer closed current connection during receive operation"},
      {"PEER_UNRESPONSIVE",
       "TRACE",
       Peer::kProcess,
       6203,
       "10.77.0.16",
       "",
       {4},
       {4},
       "peer not responding for 7s (keepalive warning)"},
      {"PEER_RETRY",
       "TRACE",
       Peer::kAddress,
       0,
       "10.77.0.17",
       "30001",
       {},
       {},
       "connection attempt timed out after 12s, attempting reconnect"},
      {"PEER_TIMEOUT_DEAD",
       "TRACE",
       Peer::kProcess,
       6204,
       "10.77.0.18",
       "",
       {5},
       {6},
       "peer failed to respond for 61s, declaring dead"},
      {"PEER_SEND_STUCK",
       "TRACE",
       Peer::kProcess,
       6205,
       "10.77.0.18",
       "",
       {6},
       {6},
       "send operation stuck for 31s, terminating connection"},
      {"PEER_INIT_TIMEOUT",
       "TRACE",
       Peer::kAddress,
       0,
       "fd00:77::19",
       "41234",
       {},
       {},
       "handshake completion timed out after 31s (incoming connection)"},
      {"PEER_KEEPALIVE_TIMEOUT",
       "TRACE",
       Peer::kProcess,
       6206,
       "10.77.0.20",
       "",
       {7},
       {7},
       "keepalive timeout after 21s, terminating connection"},
      // Not sent by 2.29-2.30: kept, marked unknown.
      {"PEER_REBORN", "", Peer::kNone, 0, "", "", {}, {}, "something a later NCCL says"},
  };
  return rows;
}

std::string List(const std::vector<int>& devs) {
  std::string s;
  for (int d : devs) s += (s.empty() ? "" : ",") + std::to_string(d);
  return s;
}

std::string Gpus(const Row& r) {
  std::string s = List(r.cuda);
  if (r.cuda != r.nvml) s += " (NVML " + List(r.nvml) + ")";
  return s;
}

std::string Time(size_t i) { return "2026-12-05 03:12:" + std::to_string(10 + i); }

// rasClientsNotifyEvent's text: "[%s] %s: %s %s\n" with a peer (so an empty
// details leaves a blank at the end), "[%s] %s: %s\n" without.
std::string Text(const Row& r, size_t i) {
  std::string peer;
  if (r.peer == Peer::kProcess) {
    peer = "Process " + std::to_string(r.pid) + " on node " + r.node + " managing GPU" +
           (r.cuda.size() > 1 ? "s " : " ") + Gpus(r);
  } else if (r.peer == Peer::kAddress) {
    peer = std::string(r.node) + "<" + r.port + ">";
  }
  std::string head = "[" + Time(i) + "] " + r.event + ": ";
  return peer.empty() ? head + r.details + "\n" : head + peer + " " + r.details + "\n";
}

std::string Json(const Row& r, size_t i) {
  std::string s = "{\n  \"timestamp\": \"" + Time(i) + "\",\n  \"group\": \"" +
                  (*r.group ? r.group : "LIFECYCLE") + "\",\n  \"event\": \"" + r.event + "\",\n";
  if (r.peer == Peer::kProcess) {
    s += "  \"peer\": {\n    \"host\": \"" + std::string(r.node) +
         "\",\n    \"pid\": " + std::to_string(r.pid) + ",\n    \"cuda_devs\": [" + List(r.cuda) +
         "],\n    \"nvml_devs\": [" + List(r.nvml) + "]\n  },\n";
  } else if (r.peer == Peer::kAddress) {
    s += "  \"peer\": {\n    \"addr\": \"" + std::string(r.node) + "<" + r.port + ">\"\n  },\n";
  }
  return s + "  \"details\": \"" + r.details + "\"\n}\n";
}

std::string Stream(const std::string& format) {
  std::string s;
  for (size_t i = 0; i < Rows().size(); ++i)
    s += format == "json" ? Json(Rows()[i], i) : Text(Rows()[i], i);
  return s;
}

void ExpectRow(const RasEvent& e, const Row& r, size_t i, const std::string& format) {
  SCOPED_TRACE(std::string(r.event) + " " + format);
  EXPECT_EQ(e.event, r.event);
  EXPECT_EQ(e.event_time, Time(i));
  EXPECT_EQ(e.known, *r.group != '\0');
  if (*r.group) {
    EXPECT_EQ(e.group, r.group);
  }
  EXPECT_EQ(e.format, format);
  EXPECT_EQ(e.node, r.node);
  EXPECT_EQ(e.port, r.port);
  EXPECT_EQ(e.pid, r.peer == Peer::kProcess ? std::optional<int64_t>(r.pid) : std::nullopt);
  EXPECT_EQ(e.gpus, r.peer == Peer::kProcess ? Gpus(r) : "");
  EXPECT_EQ(e.details, r.details);
}

TEST(RasMonitor, EveryEventInEachFormat) {
  for (const std::string format : {"text", "json"}) {
    for (size_t i = 0; i < Rows().size(); ++i) {
      const Row& r = Rows()[i];
      MonitorBatch b = ParseMonitorStream(format == "json" ? Json(r, i) : Text(r, i), format);
      EXPECT_TRUE(b.problems.empty()) << b.problems.front();
      ASSERT_EQ(b.events.size(), 1u) << r.event << " " << format;
      ExpectRow(b.events[0], r, i, format);
    }
  }
}

TEST(RasMonitor, TheDocumentedExample) {
  // docs/userguide/source/troubleshooting/ras.rst (2.30.7), both forms.
  MonitorBatch t = ParseMonitorStream(
      "[2025-12-19 13:07:07] PEER_DEAD: Process 1524345 on node 172.16.64.245 managing GPU 1\n",
      "text");
  ASSERT_EQ(t.events.size(), 1u);
  EXPECT_EQ(t.events[0].pid, 1524345);
  EXPECT_EQ(t.events[0].node, "172.16.64.245");
  EXPECT_EQ(t.events[0].gpus, "1");
  EXPECT_EQ(t.events[0].group, "LIFECYCLE");
  EXPECT_EQ(t.events[0].line, 1);
  EXPECT_EQ(
      t.events[0].raw,
      "[2025-12-19 13:07:07] PEER_DEAD: Process 1524345 on node 172.16.64.245 managing GPU 1");
}

TEST(RasMonitor, CutAtEveryByteReadsTheSame) {
  for (const std::string format : {"text", "json"}) {
    std::string s = Stream(format);
    MonitorBatch whole = ParseMonitorStream(s, format);
    ASSERT_TRUE(whole.problems.empty()) << whole.problems.front();
    ASSERT_EQ(whole.events.size(), Rows().size());
    for (size_t i = 0; i < Rows().size(); ++i) ExpectRow(whole.events[i], Rows()[i], i, format);
    for (size_t cut = 1; cut < s.size(); ++cut) {
      MonitorParser p(format);
      MonitorBatch b;
      p.Feed(std::string_view(s).substr(0, cut), &b);
      p.Feed(std::string_view(s).substr(cut), &b);
      p.Finish(&b);
      ASSERT_EQ(b.events, whole.events) << format << " cut at " << cut;
      ASSERT_TRUE(b.problems.empty()) << format << " cut at " << cut << ": " << b.problems.front();
    }
    MonitorParser bytewise(format);
    MonitorBatch b;
    for (char c : s) bytewise.Feed(std::string_view(&c, 1), &b);
    bytewise.Finish(&b);
    EXPECT_EQ(b.events, whole.events) << format;
  }
}

TEST(RasMonitor, JsonLinesCountedAndBracesInStrings) {
  std::string s = Json(Rows()[0], 0) + Json(Rows()[1], 1);
  // A compact object and a brace inside a string do not confuse the scan.
  s += "{\"event\": \"PEER_UNRESPONSIVE\", \"details\": \"a } and a \\\" and a {\"}\n";
  MonitorBatch b = ParseMonitorStream(s, "json");
  ASSERT_TRUE(b.problems.empty()) << b.problems.front();
  ASSERT_EQ(b.events.size(), 3u);
  EXPECT_EQ(b.events[0].line, 1);
  EXPECT_EQ(b.events[1].line, 13);  // each process object is 12 lines
  EXPECT_EQ(b.events[2].line, 25);
  EXPECT_EQ(b.events[2].details, "a } and a \" and a {");
  EXPECT_EQ(b.events[2].group, "TRACE");  // from its name when the object does not say
}

TEST(RasMonitor, MalformedInputIsAProblemNamingTheLineAndReadingGoesOn) {
  MonitorBatch t = ParseMonitorStream(
      "RAS Monitor Mode - watching for peer changes (Ctrl+C to exit)...\n"
      "================================================================\n" +
          Text(Rows()[0], 0) + "this is not an event\n[2026-12-05 03:12:30] lowercase: x\n" +
          Text(Rows()[1], 1),
      "text");
  ASSERT_EQ(t.events.size(), 2u);
  ASSERT_EQ(t.problems.size(), 2u);
  EXPECT_EQ(t.problems[0], "line 4: not a RAS monitor event: \"this is not an event\"");
  EXPECT_EQ(t.problems[1].rfind("line 5: ", 0), 0u) << t.problems[1];
  EXPECT_EQ(t.events[1].line, 6);

  MonitorBatch j = ParseMonitorStream(
      Json(Rows()[0], 0) + "OK\n{\"event\": \"PEER_DEAD\",}\n" +
          "{\"group\": \"TRACE\"}\n{\"event\": 7}\n" +
          "{\"event\": \"PEER_DEAD\", \"peer\": {\"pid\": \"x\"}}\n" + Json(Rows()[1], 1),
      "json");
  ASSERT_EQ(j.events.size(), 2u);
  ASSERT_EQ(j.problems.size(), 5u);
  EXPECT_EQ(j.problems[0], "line 13: not a JSON event: \"OK\"");
  EXPECT_EQ(j.problems[1].rfind("line 14: not a readable JSON event (", 0), 0u) << j.problems[1];
  EXPECT_EQ(j.problems[2].rfind("line 15: a JSON object without an \"event\"", 0), 0u);
  EXPECT_EQ(j.problems[3].rfind("line 16: a JSON object without an \"event\"", 0), 0u);
  EXPECT_EQ(j.problems[4].rfind("line 17: not a readable JSON event (", 0), 0u);
  EXPECT_EQ(j.events[1].line, 18);
}

TEST(RasMonitor, CutOffAtTheEndIsSaid) {
  std::string text = Text(Rows()[0], 0) + Text(Rows()[1], 1);
  MonitorBatch t = ParseMonitorStream(text.substr(0, text.size() - 9), "text");
  ASSERT_EQ(t.events.size(), 1u);
  ASSERT_EQ(t.problems.size(), 1u);
  EXPECT_EQ(t.problems[0].rfind("line 2: the stream ended mid-line (cut off)", 0), 0u)
      << t.problems[0];
  std::string json = Json(Rows()[0], 0) + Json(Rows()[1], 1);
  MonitorBatch j = ParseMonitorStream(json.substr(0, json.size() - 20), "json");
  ASSERT_EQ(j.events.size(), 1u);
  ASSERT_EQ(j.problems.size(), 1u);
  EXPECT_EQ(j.problems[0].rfind("line 13: the stream ended inside an event (cut off)", 0), 0u)
      << j.problems[0];
}

TEST(RasMonitor, OversizedEventSkippedAndTheNextRead) {
  for (const std::string format : {"text", "json"}) {
    std::string huge = format == "json" ? "{\"event\": \"PEER_DEAD\", \"details\": \"" +
                                              std::string(70000, 'x') + "\"}\n"
                                        : "[t] PEER_DEAD: " + std::string(70000, 'x') + "\n";
    MonitorParser p(format);
    MonitorBatch b;
    for (size_t i = 0; i < huge.size(); i += 4096)
      p.Feed(std::string_view(huge).substr(i, 4096), &b);
    p.Feed(format == "json" ? Json(Rows()[1], 1) : Text(Rows()[1], 1), &b);
    p.Finish(&b);
    ASSERT_EQ(b.problems.size(), 1u) << format;
    EXPECT_NE(b.problems[0].find("longer than 64 KiB"), std::string::npos) << b.problems[0];
    ASSERT_EQ(b.events.size(), 1u) << format;
    ExpectRow(b.events[0], Rows()[1], 1, format);
  }
}

std::string Fixture(const std::string& name) { return testing::FixtureText("ras/" + name); }

TEST(RasMonitor, FixturesOfADyingProcess) {
  MonitorBatch t = ParseMonitorStream(Fixture("monitor_events.txt"), "text");
  EXPECT_TRUE(t.problems.empty()) << t.problems.front();
  ASSERT_EQ(t.events.size(), 8u);
  EXPECT_EQ(t.events[0].event, "PEER_CONNECTING");
  EXPECT_EQ(t.events[0].port, "28028");
  EXPECT_EQ(t.events[0].details, "");
  EXPECT_EQ(t.events[2].gpus, "0,1 (NVML 2,3)");
  EXPECT_EQ(t.events[7].event, "PEER_DEAD");
  EXPECT_EQ(t.events[7].pid, 6103);
  EXPECT_EQ(t.events[7].line, 8);
  MonitorBatch j = ParseMonitorStream(Fixture("monitor_events.json"), "json");
  EXPECT_TRUE(j.problems.empty()) << j.problems.front();
  ASSERT_EQ(j.events.size(), 3u);
  EXPECT_EQ(j.events[0].gpus, "0,1 (NVML 2,3)");
  EXPECT_EQ(j.events[1].node, "10.77.0.12");
  EXPECT_EQ(j.events[1].port, "28028");
  EXPECT_EQ(j.events[2].event_time, "2026-12-05 03:13:41");
  EXPECT_EQ(j.events[2].pid, 6103);
}

TEST(RasMonitor, GarbageSaysSoABoundedNumberOfTimes) {
  std::string junk;
  for (int i = 0; i < 500; ++i) junk += "garbage\n";
  MonitorBatch b = ParseMonitorStream(junk, "text");
  EXPECT_EQ(b.problems.size(), 101u);
  EXPECT_EQ(b.problems.back(), "more problems not listed");
}

// Bytes that are not UTF-8 (a garbled stream) and NUL (JSON's \u0000):
// PostgreSQL's text takes neither and nlohmann's dump throws on the first,
// so such an event ended `ras watch` (exit 4 while spooling, 3 while
// storing) and lost the watch's verdict. They become U+FFFD; the rest of
// the event, valid UTF-8 included, is kept as it came.
TEST(RasMonitor, BytesThatAreNotTextBecomeReplacementCharacters) {
  MonitorBatch t = ParseMonitorStream(
      "[2026-12-05 03:12:40] PEER_UNRESPONSIVE: 10.77.0.12<5555> bad \xff\xfe bytes\n"
      "[2026-12-05 03:12:41] PEER_DEAD: Process 6103 on node 10.77.0.12 managing GPU 1 "
      "caf\xc3\xa9 \xc3 \xed\xa0\x80 \xf0\x9f\x98\x80\n",
      "text");
  MonitorBatch j = ParseMonitorStream(
      "{\"timestamp\": \"2026-12-05 03:12:42\", \"group\": \"LIFECYCLE\", \"event\": "
      "\"PEER_DEAD\", \"details\": \"a\\u0000b\"}\n",
      "json");
  ASSERT_EQ(t.events.size(), 2u);
  ASSERT_EQ(j.events.size(), 1u);
  EXPECT_EQ(t.events[0].details, "bad \xEF\xBF\xBD\xEF\xBF\xBD bytes");
  EXPECT_EQ(t.events[0].node, "10.77.0.12");
  EXPECT_EQ(t.events[1].pid, 6103);
  EXPECT_EQ(t.events[1].details,
            "caf\xc3\xa9 \xEF\xBF\xBD \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD \xf0\x9f\x98\x80");
  EXPECT_EQ(j.events[0].details,
            "a\xEF\xBF\xBD"
            "b");
  for (const MonitorBatch* b : {&t, &j}) {
    for (const RasEvent& e : b->events) {
      for (const std::string* field : {&e.event_time, &e.event, &e.node, &e.details, &e.raw}) {
        EXPECT_EQ(field->find('\0'), std::string::npos) << e.raw;
        EXPECT_NO_THROW(nlohmann::json(*field).dump()) << e.raw;
      }
    }
  }
}

}  // namespace
}  // namespace fabtrack::ras

// The spool's batches on disk, without a database: a run is written as a
// stream (AppendRunRecordJson) that must be the document's text byte for
// byte, and read back whole; a damaged batch is refused.
#include "store/spool.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <utility>

#include "core/run_record_json.h"
#include "tests/support/run_record_filler.h"

namespace fabtrack::store {
namespace {

namespace fs = std::filesystem;
using fabtrack::testing::Differences;
using fabtrack::testing::FilledRunRecord;

std::string Listed(const std::vector<std::string>& paths) {
  std::string out;
  for (const std::string& p : paths) out += "\n  " + p;
  return out;
}

// Every list of the record filled, strings that need escaping, optionals both
// set and unset.
RunRecord RichRun() {
  RunRecord run;
  run.cluster = "lab \"quoted\" \\ tab\t";
  run.started_at = "2026-12-04T02:00:00Z";
  run.ended_at = "2026-12-04T02:01:00Z";
  run.source = "fabtrack-allreduce";
  run.backend = "mpi";
  run.collective = "all_reduce";
  run.dtype = "float";
  run.ranks = 4;
  run.nodes = 2;
  run.hosts = {"node01", "nöde02 ✓"};
  run.transports = {"NET/IB", "P2P"};
  run.nccl_env = {{"NCCL_IB_HCA", "mlx5_0,mlx5_1"}};
  run.tags = {{"owner", "<script>"}};
  run.content_hash = "abc123";
  run.status = RunStatus::kPartial;
  for (int i = 0; i < 3; ++i) {
    ResultRow r;
    r.row.size_bytes = int64_t{8} << (10 * i);
    r.row.count = r.row.size_bytes / 4;
    r.row.type = "float";
    if (i != 1) r.row.oop = Measurement{.time_us = 10.5 + i, .algbw_gbps = 1.25, .busbw_gbps = 2.5};
    r.latency.p50_us = 11.0 * (i + 1);
    r.latency.straggler_host = "node01";
    r.row.line = 30 + i;
    run.results.push_back(r);
    run.latency_samples.push_back({i, i % 2 == 1, i, 9.75 + i});
    run.rank_timings.push_back({.row_index = i,
                                .in_place = false,
                                .rank = i,
                                .host = "node01",
                                .mean_us = 3.0,
                                .p50_us = std::nullopt,
                                .p99_us = 5.0,
                                .max_us = 6.0,
                                .lateness_us = 0.25});
    run.step_samples.push_back({i, 100.0 + i, 80.0, 20.0 + i});
  }
  run.link_probes.push_back({"node01", "node02", 1 << 20, 0.001, 8.39});
  run.rank_devices.push_back(
      {.rank = 0, .host = "node01", .bus_id = "0x0f", .gpu_model = "NVIDIA H100 80GB HBM3"});
  NetDevice nic;
  nic.host = "node01";
  nic.index = 0;
  nic.name = "mlx5_0";
  nic.port = 1;
  nic.link = "IB";
  run.net_devices.push_back(nic);
  ChannelObservation channel;
  channel.host = "node01";
  channel.channel = 2;
  channel.from_rank = 0;
  channel.to_rank = 4;
  channel.family = "NET/IB";
  channel.detail = "NET/IB/0/GDRDMA";
  channel.gdrdma = true;
  channel.line = 120;
  run.channels.push_back(channel);
  StepSummary step;
  step.model_params = 7'000'000'000;
  step.grad_dtype = "bf16";
  step.step_ms_p50 = 101.5;
  run.step = step;
  return run;
}

TEST(RunRecordJson, StreamedTextIsTheDocumentsByteForByte) {
  for (const RunRecord& run : {RunRecord{}, RichRun()}) {
    std::string streamed = "prefix:";
    AppendRunRecordJson(run, &streamed);
    EXPECT_EQ(streamed, "prefix:" + RunRecordToJson(run).dump());
  }
}

TEST(RunRecordJson, StreamedTextReadsBackAsTheSameRun) {
  const RunRecord run = RichRun();
  std::string text;
  AppendRunRecordJson(run, &text);
  std::string error;
  auto back = RunRecordFromJson(nlohmann::json::parse(text), &error);
  ASSERT_TRUE(back) << error;
  EXPECT_TRUE(*back == run) << Listed(Differences(run, *back));
  EXPECT_EQ(back->results.size(), 3u);
  EXPECT_EQ(back->hosts[1], "nöde02 ✓");
}

TEST(RunRecordJson, ParsedElementByElementAsTheDocumentReadsIt) {
  const RunRecord run = RichRun();
  const std::string record = RunRecordToJson(run).dump();
  for (const auto& [text, key] :
       {std::pair{record, std::string()},
        std::pair{"{\"a\":[1,{\"results\":[2]}],\"run\":" + record + ",\"z\":{\"results\":[3]}}",
                  std::string("run")}}) {
    nlohmann::json rest;
    std::string error;
    auto parsed = ParseRunRecordText(text, key, &rest, &error);
    ASSERT_TRUE(parsed) << error;
    EXPECT_TRUE(*parsed == run) << Listed(Differences(run, *parsed));
    // The long lists were dropped from the document as they were read; the
    // same names outside the run were left alone.
    const nlohmann::json& in_rest = key.empty() ? rest : rest["run"];
    EXPECT_TRUE(in_rest["results"].empty());
    EXPECT_TRUE(in_rest["latency_samples"].empty());
    EXPECT_TRUE(in_rest["rank_timings"].empty());
    EXPECT_EQ(in_rest["ranks"].size(), 1u);
    if (!key.empty()) {
      EXPECT_EQ(rest["a"][1]["results"], nlohmann::json::array({2}));
      EXPECT_EQ(rest["z"]["results"], nlohmann::json::array({3}));
    }
  }
}

TEST(RunRecordJson, ABadElementGivesTheDocumentReadersError) {
  nlohmann::json doc = RunRecordToJson(RichRun());
  for (const auto& [list, field, value] :
       {std::tuple{"results", "size_bytes", nlohmann::json("eight")},
        std::tuple{"rank_timings", "rank", nlohmann::json(1.5)}}) {
    nlohmann::json bad = doc;
    bad[list][1][field] = value;
    std::string whole_error, streamed_error;
    EXPECT_FALSE(RunRecordFromJson(bad, &whole_error));
    nlohmann::json rest;
    EXPECT_FALSE(ParseRunRecordText(bad.dump(), "", &rest, &streamed_error));
    EXPECT_FALSE(streamed_error.empty());
    EXPECT_EQ(streamed_error, whole_error);
  }
  nlohmann::json bad = doc;
  bad["latency_samples"][0] = nlohmann::json::array({1, 2});
  std::string error;
  nlohmann::json rest;
  EXPECT_FALSE(ParseRunRecordText(bad.dump(), "", &rest, &error));
  EXPECT_NE(error.find("latency_samples"), std::string::npos) << error;
  EXPECT_FALSE(ParseRunRecordText(R"({"run": {"results": [)", "run", &rest, &error));
  EXPECT_EQ(error.rfind("not JSON: ", 0), 0u) << error;
}

class SpoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fabtrack-spool-test-" + std::to_string(getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(SpoolTest, RunBatchWithBracketRoundTrips) {
  Spool spool(dir_.string());
  SpoolBatch batch;
  batch.run = RichRun();
  SpooledBracket bracket;
  bracket.started_at = batch.run.started_at;
  bracket.ended_at = *batch.run.ended_at;
  bracket.seconds = 60;
  HostPorts host;
  host.host = "node01";
  PortSample port;
  port.device = "mlx5_0";
  port.port = 1;
  port.state = "ACTIVE";
  host.ports.push_back(port);
  bracket.before = {host};
  bracket.after = {host};
  batch.bracket = bracket;
  const std::string path = spool.Put(batch);
  ASSERT_EQ(spool.Pending(), std::vector<std::string>{path});
  // Header line, payload line, nothing else; no temporary file left.
  std::ifstream in(path);
  std::string header, payload, rest;
  ASSERT_TRUE(std::getline(in, header));
  ASSERT_TRUE(std::getline(in, payload));
  EXPECT_FALSE(std::getline(in, rest));
  EXPECT_EQ(payload.rfind("{\"bracket\":{", 0), 0u);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);

  std::string why;
  auto back = spool.Read(path, &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(back->kind, SpoolBatch::Kind::kRun);
  EXPECT_TRUE(back->run == batch.run) << Listed(Differences(batch.run, back->run));
  ASSERT_TRUE(back->bracket);
  EXPECT_EQ(back->bracket->before, bracket.before);
  EXPECT_EQ(back->bracket->after, bracket.after);
  EXPECT_EQ(back->bracket->seconds, 60);
}

// `sweep --fabric-scan`: the run's switch-side window goes through the spool
// whole (a run spooled in an outage keeps its uplinks' deltas).
TEST_F(SpoolTest, RunBatchWithFabricWindowRoundTrips) {
  Spool spool(dir_.string());
  SpoolBatch batch;
  batch.run = RichRun();
  RunFabricWindow window;
  window.before.scanned_at = "2026-12-05T10:00:00Z";
  window.after.scanned_at = "2026-12-05T10:01:00Z";
  for (FabricScan* scan : {&window.before, &window.after}) {
    scan->nodes = {{"0x01", "leaf01", "switch", 2, 1}, {"0x02", "spine01", "switch", 1, 2}};
    scan->links = {{{"0x01", "leaf01", 2}, {"0x02", "spine01", 1}}};
    FabricPort port;
    port.node_guid = "0x01";
    port.port = 2;
    port.counters = {{"symbol_error", scan == &window.before ? 0u : 17u}};
    scan->ports = {port};
  }
  window.hosts = {{"node01", {"0x10"}}};
  window.unmapped_hosts = {"node02"};
  window.leaves = {"leaf01"};
  batch.fabric_window = window;
  std::string why;
  auto back = spool.Read(spool.Put(batch), &why);
  ASSERT_TRUE(back) << why;
  ASSERT_TRUE(back->fabric_window);
  EXPECT_EQ(*back->fabric_window, window);
  EXPECT_TRUE(back->run == batch.run) << Listed(Differences(batch.run, back->run));
}

// The sweep's CPU bracket: each node's window goes through the spool whole.
TEST_F(SpoolTest, RunBatchWithCpuWindowsRoundTrips) {
  Spool spool(dir_.string());
  SpoolBatch batch;
  batch.run = RichRun();
  batch.cpu_windows = {{.host = "node01",
                        .seconds = 41.5,
                        .cpus = 64,
                        .busy_fraction = 0.37,
                        .steal_fraction = 0.02,
                        .other_cpus = 17.25,
                        .load1_before = 3.5,
                        .load1_after = 21.75,
                        .top_others = {{"backup-agent", 612.5}, {"python3", 80}}},
                       {.host = "node02", .seconds = 41.25, .cpus = 64}};
  std::string why;
  auto back = spool.Read(spool.Put(batch), &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(back->cpu_windows, batch.cpu_windows);
  EXPECT_TRUE(back->run == batch.run) << Listed(Differences(batch.run, back->run));
}

TEST_F(SpoolTest, RunBatchWithoutBracketRoundTrips) {
  Spool spool(dir_.string());
  SpoolBatch batch;
  batch.run = RichRun();
  const std::string path = spool.Put(batch);
  std::string why;
  auto back = spool.Read(path, &why);
  ASSERT_TRUE(back) << why;
  EXPECT_FALSE(back->bracket);
  EXPECT_FALSE(back->fabric_window);
  EXPECT_TRUE(back->cpu_windows.empty());
  EXPECT_TRUE(back->run == batch.run) << Listed(Differences(batch.run, back->run));
}

// Every field of the run survives the spool: the batch is written by the
// streaming writer and read element by element.
TEST_F(SpoolTest, RunBatchKeepsEveryFieldOfTheRun) {
  Spool spool(dir_.string());
  SpoolBatch batch;
  batch.run = FilledRunRecord();
  const std::string path = spool.Put(batch);
  std::string why;
  auto back = spool.Read(path, &why);
  ASSERT_TRUE(back) << why;
  EXPECT_TRUE(back->run == batch.run)
      << "lost or changed:" << Listed(Differences(batch.run, back->run));
}

TEST_F(SpoolTest, AbComparisonRoundTripsWithEveryField) {
  Spool spool(dir_.string());
  SpoolBatch batch;
  batch.kind = SpoolBatch::Kind::kAb;
  batch.target = SpoolTarget{"h", "5432", "fabtrack", "u"};
  AbRecord& r = batch.ab;
  r.cluster = "lab";
  r.ab_id = "20261204T213512Z-4c1d2e";
  r.compared_at = "2026-12-04T21:40:00Z";
  r.setting = "nccl-lib=/opt/nccl-2.23.4/lib";
  r.rounds = 3;
  r.order = "ABBAAB";
  r.outcome = AbOutcome::kMixed;
  AbJudgement j;
  j.collective = "all_gather";
  j.nodes = 8;
  j.metric = "time";
  j.a = {10.5, 10.25, 10.75};
  j.b = {8.125, 8.5, 8.0};
  j.ratio = 0.8;
  j.ratio_low = 0.75;
  j.ratio_high = 0.83;
  j.noise = 0.049;
  j.outcome = AbOutcome::kBFaster;
  r.headlines = {j};
  j.size_bytes = 1 << 20;
  j.metric = "busbw";
  j.outcome = AbOutcome::kBSlower;
  r.sizes = {j, j};
  r.sizes[1].size_bytes = 8;
  r.sizes[1].outcome = AbOutcome::kNoDifference;
  const std::string path = spool.Put(batch);
  std::string why;
  std::optional<SpoolBatch> read = spool.Read(path, &why);
  ASSERT_TRUE(read) << why;
  EXPECT_EQ(read->kind, SpoolBatch::Kind::kAb);
  EXPECT_EQ(read->ab, batch.ab);
  ASSERT_EQ(spool.List().size(), 1u);
  EXPECT_EQ(spool.List()[0].kind, "ab");
}

// What `ras watch` takes while the database is away: every field of a
// snapshot (ranks, counts, unknown pid), an event and the verdict come back.
TEST_F(SpoolTest, RasWatchRecordRoundTripsWithEveryField) {
  Spool spool(dir_.string());
  SpoolBatch batch;
  batch.kind = SpoolBatch::Kind::kRas;
  batch.target = SpoolTarget{"h", "5432", "fabtrack", "u"};
  RasWatchRecord& r = batch.ras;
  r.cluster = "lab";
  r.job_id = "81234";
  RasSnapshot s;
  s.cluster = "lab";
  s.job_id = "81234";
  s.taken_at = "2026-12-05T03:12:00.250000Z";
  s.taken_at_s = 1796526720.25;
  s.report_format = "text";
  s.nccl_version = "2.26.2";
  s.health = "warning";
  RasCommState c;
  c.id = "#0-0 (5ca1ab1e0dd5eed5)";
  c.size = 16;
  c.state = "RUNNING";
  c.errors = "INCOMPLETE,MISMATCH";
  c.ranks = {RasRankState{3, "10.1.0.1", "gpu-1", "3", 40003, "running", {{"collective", 1000}}},
             RasRankState{5, "10.1.0.2", "", "1 (NVML 3)", std::nullopt, "dead", {}}};
  s.communicators = {c};
  r.snapshots = {s, s};
  r.snapshots[1].taken_at = "2026-12-05T03:12:30.250000Z";
  RasEvent e;
  e.event_time = "2026-12-05 04:12:30";
  e.received_at = "2026-12-05T03:12:31.250000Z";
  e.group = "LIFECYCLE";
  e.event = "PEER_DEAD";
  e.known = true;
  e.node = "10.1.0.2";
  e.port = "28028";
  e.host = "gpu-2";
  e.pid = 40005;
  e.gpus = "1";
  e.details = "unreachable";
  e.format = "json";
  e.raw = "{\"event\": \"PEER_DEAD\"}";
  e.line = 7;
  r.events = {e};
  RasWatchVerdict v;
  v.health = "critical";
  v.snapshots = 2;
  v.first_taken_at = r.snapshots[0].taken_at;
  v.last_taken_at = r.snapshots[1].taken_at;
  v.findings.push_back({"stuck",
                        "critical",
                        c.id,
                        "no collective advanced",
                        v.first_taken_at,
                        {RasWatchRank{3, "10.1.0.1", "gpu-1", "3", 40003, "collective 1000"}},
                        {"mlx5_3 port 1 link_downed +2 at 2026-12-05T03:12:10Z"}});
  r.verdict = v;
  const std::string path = spool.Put(batch);
  std::string why;
  std::optional<SpoolBatch> read = spool.Read(path, &why);
  ASSERT_TRUE(read) << why;
  EXPECT_EQ(read->kind, SpoolBatch::Kind::kRas);
  EXPECT_EQ(read->ras, batch.ras);
  EXPECT_EQ(read->ras.snapshots[1].taken_at_s, s.taken_at_s) << "not in RasSnapshot's ==";
  ASSERT_EQ(spool.List().size(), 1u);
  EXPECT_EQ(spool.List()[0].kind, "ras");
}

TEST_F(SpoolTest, AlteredPayloadFailsItsChecksum) {
  Spool spool(dir_.string());
  SpoolBatch batch;
  batch.run = RichRun();
  const std::string path = spool.Put(batch);
  std::string text;
  {
    std::ifstream in(path);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const size_t at = text.find("node01");
  ASSERT_NE(at, std::string::npos);
  text[at] = 'N';
  std::ofstream(path, std::ios::trunc) << text;
  std::string why;
  EXPECT_FALSE(spool.Read(path, &why));
  EXPECT_NE(why.find(":2: checksum mismatch"), std::string::npos) << why;
}

}  // namespace
}  // namespace fabtrack::store

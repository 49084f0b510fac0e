// The run document (core/run_record_json.h) carries every field of a
// RunRecord. A record with every field filled (tests/support/
// run_record_filler.h) reads back equal as a struct, through the document
// reader and through the streaming writer with the element-wise reader (the
// spool's path), and its text is the same bytes from one write to the next.
#include "core/run_record_json.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/run_record_filler.h"

namespace fabtrack {
namespace {

using testing::DefaultFields;
using testing::Differences;
using testing::FilledRunRecord;

std::string Listed(const std::vector<std::string>& paths) {
  std::string out;
  for (const std::string& p : paths) out += "\n  " + p;
  return out;
}

// Every field filled, with some optionals and lists emptied again: absent
// must come back absent (a measurement with one per-iteration figure, one
// with none, no in-place half, no step summary).
RunRecord SparseRunRecord() {
  RunRecord run = FilledRunRecord();
  run.ended_at.reset();
  run.gdrdma.reset();
  run.step.reset();
  run.step_samples.clear();
  run.rank_devices[1].group.reset();
  run.rank_devices[1].pid.reset();
  ResultRow& first = run.results[0];
  first.row.ip.reset();
  first.row.oop->iter_min_us.reset();
  first.row.oop->iter_max_us.reset();
  first.row.oop->iter_p50_us.reset();
  first.row.oop->iter_p99_us.reset();  // iter_cv_pct alone stays
  first.latency = {};
  ResultRow& second = run.results[1];
  second.row.ip = Measurement{.time_us = 3.5, .wrong = 0};  // no per-iteration figures
  second.row.line = 0;
  second.latency.straggler_host.reset();
  run.rank_timings[0].host.reset();
  run.channels[1].direction.reset();
  return run;
}

std::vector<std::pair<std::string, RunRecord>> Records() {
  return {{"filled", FilledRunRecord()}, {"sparse", SparseRunRecord()}, {"empty", RunRecord{}}};
}

RunRecord ReadDocument(const std::string& text) {
  std::string error;
  std::optional<RunRecord> run = RunRecordFromJson(nlohmann::json::parse(text), &error);
  EXPECT_TRUE(run) << error;
  return run.value_or(RunRecord{});
}

RunRecord ReadElementWise(const std::string& text, const std::string& key) {
  nlohmann::json rest;
  std::string error;
  std::optional<RunRecord> run = ParseRunRecordText(text, key, &rest, &error);
  EXPECT_TRUE(run) << error;
  return run.value_or(RunRecord{});
}

TEST(RunRecordFillerTest, SetsEveryField) {
  const RunRecord run = FilledRunRecord();
  EXPECT_TRUE(DefaultFields(run).empty()) << "left at their default:" << Listed(DefaultFields(run));
  EXPECT_FALSE(run == RunRecord{});
  EXPECT_FALSE(DefaultFields(SparseRunRecord()).empty());
}

TEST(RunRecordJsonTest, DocumentCarriesEveryField) {
  for (const auto& [name, run] : Records()) {
    const RunRecord back = ReadDocument(RunRecordToJson(run).dump());
    EXPECT_TRUE(back == run) << name << ": lost or changed:" << Listed(Differences(run, back));
    // The harness writes its result file indented.
    const RunRecord file = ReadDocument(RunRecordToJson(run).dump(1));
    EXPECT_TRUE(file == run) << name << ": lost or changed:" << Listed(Differences(run, file));
  }
}

TEST(RunRecordJsonTest, StreamedDocumentCarriesEveryField) {
  for (const auto& [name, run] : Records()) {
    std::string streamed;
    AppendRunRecordJson(run, &streamed);
    EXPECT_EQ(streamed, RunRecordToJson(run).dump()) << name;
    const RunRecord whole = ReadElementWise(streamed, "");
    EXPECT_TRUE(whole == run) << name << ": lost or changed:" << Listed(Differences(run, whole));
    // As the spool holds it: the run under a key of the batch.
    const std::string batch = R"({"bracket":null,"run":)" + streamed + R"(,"z":[1]})";
    const RunRecord keyed = ReadElementWise(batch, "run");
    EXPECT_TRUE(keyed == run) << name << ": lost or changed:" << Listed(Differences(run, keyed));
  }
}

TEST(RunRecordJsonTest, WriteReadWriteGivesTheSameBytes) {
  for (const auto& [name, run] : Records()) {
    const std::string first = RunRecordToJson(run).dump();
    EXPECT_EQ(RunRecordToJson(ReadDocument(first)).dump(), first) << name;
    std::string again;
    AppendRunRecordJson(ReadElementWise(first, ""), &again);
    EXPECT_EQ(again, first) << name;
    const std::string indented = RunRecordToJson(run).dump(1);
    EXPECT_EQ(RunRecordToJson(ReadDocument(indented)).dump(1), indented) << name;
  }
}

// What the comparison is for: a document that drops a field (as this one did
// with the per-iteration figures and the device group before they were
// carried) reads back as a different record, and the difference is named.
TEST(RunRecordJsonTest, AFieldTheDocumentDropsIsNamed) {
  const RunRecord run = FilledRunRecord();
  nlohmann::json doc = RunRecordToJson(run);
  doc["results"][0]["oop"].erase("iter");
  doc["ranks"][1].erase("group");
  std::string error;
  std::optional<RunRecord> back = RunRecordFromJson(doc, &error);
  ASSERT_TRUE(back) << error;
  EXPECT_FALSE(*back == run);
  EXPECT_EQ(Differences(run, *back),
            (std::vector<std::string>{"rank_devices[1].group (absent in the second)",
                                      "results[0].row.oop.iter_min_us (absent in the second)",
                                      "results[0].row.oop.iter_max_us (absent in the second)",
                                      "results[0].row.oop.iter_p50_us (absent in the second)",
                                      "results[0].row.oop.iter_p99_us (absent in the second)",
                                      "results[0].row.oop.iter_cv_pct (absent in the second)"}));
}

// A result file of the previous document (no per-iteration figures, no row
// line, no device group) still reads, and from then on writes stably.
TEST(RunRecordJsonTest, HarnessFixtureReadsAndWritesStably) {
  std::ifstream in(std::string(FABTRACK_FIXTURE_DIR) + "/harness/result_2rank_mpi.json");
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  ASSERT_FALSE(text.empty());
  const RunRecord run = ReadDocument(text);
  ASSERT_FALSE(run.results.empty());
  EXPECT_EQ(run.results[0].row.oop->iter_p99_us, std::nullopt);
  EXPECT_TRUE(run.results[0].latency.p99_us.has_value());
  const std::string first = RunRecordToJson(run).dump();
  const RunRecord back = ReadDocument(first);
  EXPECT_TRUE(back == run) << Listed(Differences(run, back));
  EXPECT_EQ(RunRecordToJson(back).dump(), first);
}

}  // namespace
}  // namespace fabtrack

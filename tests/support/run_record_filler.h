// Round trips of a RunRecord are tested against the struct (operator==), with
// every field of the record and of every struct it holds set to a distinct,
// non-default value: a field that a writer or reader forgets then fails the
// test, which comparing two documents (a field dropped on both sides) cannot.
//
// run_record_filler.cc names every field of every such struct, in order, in a
// structured binding. A struct that gains a field stops that file compiling
// ("only N names provided for structured binding ... decomposes into N+1
// elements") until the field is named there; then the round-trip tests fail
// until core/run_record_json.cc carries it. (A structured binding, not
// sizeof: a new bool can hide in padding.)
#pragma once

#include <string>
#include <vector>

#include "core/run_record.h"

namespace fabtrack::testing {

// Every leaf set from one counter: numbers 1, 2, 3, ... (int64 ones above
// 2^40, doubles with a fraction), strings "s<n>" with characters JSON must
// escape, bools true, status partial, every optional present, every list and
// map two elements long.
RunRecord FilledRunRecord();

// The paths of the leaves where a and b differ, e.g.
// "results[1].row.oop.iter_p99_us" or "channels.size()"; empty when a == b.
std::vector<std::string> Differences(const RunRecord& a, const RunRecord& b);

// The paths of the leaves that hold their default value (an empty optional,
// list or map, 0, false, ""): empty for FilledRunRecord().
std::vector<std::string> DefaultFields(const RunRecord& run);

}  // namespace fabtrack::testing

// Parser for the JSON report that nccl-tests writes with `-J FILE` (file
// format versions 2 and 3: one object with "config", "results" and trailer
// objects).
#pragma once

#include <string_view>
#include <vector>

#include "core/model.h"

namespace fabtrack {

// The result table of an nccl-tests `-J` report; one element for a usable
// report, none for text that is not one. Pure; never throws.
//
// The collective comes from args[0] ("./all_reduce_perf" -> "all_reduce").
// env entries for NCCL_, UCX_, OMPI_, SLURM_ and CUDA_ variables are kept.
// A report cut short (job killed while writing) is invalid JSON: the results
// that were written completely are recovered, complete is false and `errors`
// (which may be null) names the line where the text ends. Text that is not
// JSON yields no table and one error with the line of the problem.
std::vector<TestTable> ParseNcclTestsJson(std::string_view text, std::vector<ParseError>* errors);

}  // namespace fabtrack

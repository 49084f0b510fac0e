// The JSON shape `fabtrack parse --format json` prints for one file.
#pragma once

#include <nlohmann/json.hpp>

#include "core/model.h"

namespace fabtrack {

nlohmann::json ParsedFileToJson(const ParsedFile& parsed);

// The pieces of that shape, for a writer that streams the tests: one element
// of "tests", and every other member of the file's object. "dropped" (what a
// long file's parse counted instead of keeping) is present only when
// something was left out.
nlohmann::json TestTableToJson(const TestTable& table);
nlohmann::json ParsedFileToJsonWithoutTests(const ParsedFile& parsed);

}  // namespace fabtrack

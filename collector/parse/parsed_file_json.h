// The JSON shape `fabtrack parse --format json` prints for one file.
#pragma once

#include <string>

#include "core/json_instances.h"
#include "core/model.h"

namespace fabtrack {

nlohmann::json ParsedFileToJson(const ParsedFile& parsed);

// The pieces of that shape, for a writer that streams the tests: one element
// of "tests", and every other member of the file's object. "dropped" (what a
// long file's parse counted instead of keeping) is present only when
// something was left out.
nlohmann::json TestTableToJson(const TestTable& table);
// The same element written straight as text (what TestTableToJson parses), laid
// out as nlohmann's dump(2) of it nested `depth` levels deep would be.
void AppendTestTableJson(const TestTable& table, int depth, std::string* out);
// With `row_text` false every row goes through the general writer, not the
// precomputed row text: the same bytes, which the tests check.
void AppendTestTableJson(const TestTable& table, int depth, std::string* out, bool row_text);
nlohmann::json ParsedFileToJsonWithoutTests(const ParsedFile& parsed);

}  // namespace fabtrack

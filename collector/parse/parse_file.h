// Entry point of the parsers: one file's text in, everything it says out.
#pragma once

#include <string>
#include <string_view>

#include "core/model.h"

namespace fabtrack {

// Detects the format (nccl-tests JSON, or text holding nccl-tests tables and/or
// NCCL debug lines, in any mix) and runs the matching parsers. Pure: `name` is
// only copied into the result.
ParsedFile ParseText(std::string_view text, const std::string& name);

// "2.29.7" from NCCL_VERSION_CODE 22907 (2708 -> "2.7.8" before 2.9).
std::string NcclVersionFromCode(int code);

// Reads `path` and parses it. I/O failures become an error entry (line 0).
ParsedFile ParsePath(const std::string& path);

}  // namespace fabtrack

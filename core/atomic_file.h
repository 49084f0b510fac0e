// Whole-file writes that readers never see half-done: write a temporary file
// beside the target, fsync it, rename it over the target.
#pragma once

#include <string>

namespace fabtrack {

// Throws std::runtime_error naming the file on any failure; the target is
// then untouched and the temporary removed.
void WriteFileAtomically(const std::string& path, const std::string& content);

}  // namespace fabtrack

// FILE|FOLDER|GLOB arguments of the commands that read files (parse,
// ingest): one expansion, one set of messages.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace fabtrack::app {

// The files the arguments stand for, in argument order: a folder is the
// regular files in it (with `walk_folders`, below it too), sorted by name; a
// glob (quoted: `'nightly/*.log'`) its sorted matches, folders among them
// expanded the same way. A plain path is kept as given, so that a missing
// file is reported where it is read, with the OS's reason. A folder that
// holds no file, cannot be listed, or a glob without a match is reported on
// `err` ("nightly: folder holds no regular file") and makes it return
// false; the other arguments are still expanded.
bool ExpandInputPaths(const std::vector<std::string>& args, bool walk_folders,
                      std::vector<std::string>* files, std::ostream& err);

}  // namespace fabtrack::app

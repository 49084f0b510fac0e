// The owner of the production targets' precompiled header
// (cmake/precompiled_headers.cmake): CMake builds a target's precompiled
// header with that target's flags, and an object library needs a source.

// nlohmann/json's parser and serializer, compiled once (core/json_instances.cc)
// instead of in every unit that parses or prints JSON (issue 33: they were
// ~20% of the machine code of a fresh build of fabtrack, compiled again in
// each of ~20 units at -O3; BENCHMARKS.md, "Fresh build CPU"). Include this
// where <nlohmann/json.hpp> would be included. The extern declarations only
// stop implicit instantiation: a unit without them still compiles and links.
// Each parse or dump is one call into the instantiation, whose internals are
// inlined there as before.
#pragma once

#include <istream>
#include <nlohmann/json.hpp>
#include <string>

namespace fabtrack::json_instances {
// The input adapters json::parse picks: a std::string, a std::string_view /
// const char* / (pointer, pointer) range, and an std::istream.
using StringInput = nlohmann::detail::iterator_input_adapter<std::string::const_iterator>;
using CharsInput = nlohmann::detail::iterator_input_adapter<const char*>;
using StreamInput = nlohmann::detail::input_stream_adapter;
}  // namespace fabtrack::json_instances

extern template class nlohmann::detail::serializer<nlohmann::json>;
extern template class nlohmann::detail::lexer<nlohmann::json,
                                              fabtrack::json_instances::StringInput>;
extern template class nlohmann::detail::parser<nlohmann::json,
                                               fabtrack::json_instances::StringInput>;
extern template class nlohmann::detail::lexer<nlohmann::json, fabtrack::json_instances::CharsInput>;
extern template class nlohmann::detail::parser<nlohmann::json,
                                               fabtrack::json_instances::CharsInput>;
extern template class nlohmann::detail::lexer<nlohmann::json,
                                              fabtrack::json_instances::StreamInput>;
extern template class nlohmann::detail::parser<nlohmann::json,
                                               fabtrack::json_instances::StreamInput>;

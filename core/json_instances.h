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
// basic_json's own members that were compiled out of line in most units
// (their machine code, summed over the objects of a fresh build, counted
// 20-26 copies each): the value's destructor, the copy and initializer-list
// constructors, operator[], push_back and dump. Round six in BENCHMARKS.md.
extern template void nlohmann::json::json_value::destroy(nlohmann::detail::value_t);
extern template nlohmann::json::basic_json(nlohmann::json::initializer_list_t, bool,
                                           nlohmann::detail::value_t);
extern template nlohmann::json::basic_json(const nlohmann::json&);
extern template nlohmann::json& nlohmann::json::operator[](std::string);
extern template void nlohmann::json::push_back(nlohmann::json::initializer_list_t);
extern template void nlohmann::json::push_back(nlohmann::json&&);
extern template std::string nlohmann::json::dump(int, char, bool,
                                                 nlohmann::detail::error_handler_t) const;

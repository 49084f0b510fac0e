// The one instantiation of what core/json_instances.h declares extern.
#include "core/json_instances.h"

template class nlohmann::detail::serializer<nlohmann::json>;
template class nlohmann::detail::lexer<nlohmann::json, fabtrack::json_instances::StringInput>;
template class nlohmann::detail::parser<nlohmann::json, fabtrack::json_instances::StringInput>;
template class nlohmann::detail::lexer<nlohmann::json, fabtrack::json_instances::CharsInput>;
template class nlohmann::detail::parser<nlohmann::json, fabtrack::json_instances::CharsInput>;
template class nlohmann::detail::lexer<nlohmann::json, fabtrack::json_instances::StreamInput>;
template class nlohmann::detail::parser<nlohmann::json, fabtrack::json_instances::StreamInput>;
template void nlohmann::json::json_value::destroy(nlohmann::detail::value_t);
template nlohmann::json::basic_json(nlohmann::json::initializer_list_t, bool,
                                    nlohmann::detail::value_t);
template nlohmann::json::basic_json(const nlohmann::json&);
template nlohmann::json& nlohmann::json::operator[](std::string);
template void nlohmann::json::push_back(nlohmann::json::initializer_list_t);
template void nlohmann::json::push_back(nlohmann::json&&);
template std::string nlohmann::json::dump(int, char, bool, nlohmann::detail::error_handler_t) const;

// The one instantiation of what core/json_instances.h declares extern.
#include "core/json_instances.h"

template class nlohmann::detail::serializer<nlohmann::json>;
template class nlohmann::detail::lexer<nlohmann::json, fabtrack::json_instances::StringInput>;
template class nlohmann::detail::parser<nlohmann::json, fabtrack::json_instances::StringInput>;
template class nlohmann::detail::lexer<nlohmann::json, fabtrack::json_instances::CharsInput>;
template class nlohmann::detail::parser<nlohmann::json, fabtrack::json_instances::CharsInput>;
template class nlohmann::detail::lexer<nlohmann::json, fabtrack::json_instances::StreamInput>;
template class nlohmann::detail::parser<nlohmann::json, fabtrack::json_instances::StreamInput>;

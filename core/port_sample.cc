#include "core/port_sample.h"

namespace fabtrack {

// The special members, out of line (the header says why).
PortSample::PortSample() = default;
PortSample::PortSample(const PortSample&) = default;
PortSample::PortSample(PortSample&&) noexcept = default;
PortSample& PortSample::operator=(const PortSample&) = default;
PortSample& PortSample::operator=(PortSample&&) noexcept = default;
PortSample::~PortSample() = default;

}  // namespace fabtrack

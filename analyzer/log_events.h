// What a stored log line means (LogEventView.text): IB completion errors with
// their ibv_wc_status decoded, nccl-tests failures, the lines that say RDMA
// was not available, lost GPUDirect RDMA per HCA. Pure; the detectors that
// read failures and transports share it so that one line is read one way.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/analysis_input.h"

namespace fabtrack::analyzer {

enum class LogEventKind {
  kIbCompletionError,  // "NET/IB : Got completion from peer P with error 12, ..."
  kTestFailure,        // nccl-tests "Test NCCL failure common.cu:..." / "NCCL error"
  kIbNoDevice,         // "NET/IB : No device found."
  kIbverbsMissing,     // "Failed to open libibverbs.so[.1]"
  kNetPluginFailed,    // "NET/Plugin : Plugin load (libnccl-net.so) returned 2"
  kGdrDisabledHca,     // "NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'"
  kWarning,            // any other NCCL WARN line
  kOther,              // an INFO line that says nothing above
};

struct LogEventReading {
  LogEventKind kind = LogEventKind::kOther;
  // Lines of one kind share it: WARN lines are grouped by their text up to
  // the first number ("Cuda failure", "NET/IB : Got completion from peer").
  std::string group;
  std::optional<std::string> peer;    // "10.0.0.2<41234>"
  std::optional<std::string> device;  // the HCA: "mlx5_0"
  std::optional<int> hca_index;
  std::optional<int> wc_status;  // ibv_wc_status
  std::optional<int> opcode;
  std::optional<int> vendor_err;
};

LogEventReading ReadLogEvent(const LogEventView& event);

// ibv_wc_status by number, as libibverbs names it ("IBV_WC_RETRY_EXC_ERR"),
// and what it means ("transport retry counter exceeded"); nullptr when the
// number is not one of libibverbs' statuses.
const char* WcStatusName(int status);
const char* WcStatusMeaning(int status);
// "status 12 (IBV_WC_RETRY_EXC_ERR: transport retry counter exceeded)".
std::string DescribeWcStatus(int status);

}  // namespace fabtrack::analyzer

#include "analyzer/log_events.h"

#include <cctype>

#include "core/pattern.h"

namespace fabtrack::analyzer {
namespace {

struct WcStatus {
  const char* name;
  const char* meaning;
};

// enum ibv_wc_status in <infiniband/verbs.h>, in order; meanings from
// ibv_poll_cq(3) and ibv_wc_status_str().
constexpr WcStatus kWcStatuses[] = {
    {"IBV_WC_SUCCESS", "success"},
    {"IBV_WC_LOC_LEN_ERR", "local length error"},
    {"IBV_WC_LOC_QP_OP_ERR", "local QP operation error"},
    {"IBV_WC_LOC_EEC_OP_ERR", "local EE context operation error"},
    {"IBV_WC_LOC_PROT_ERR", "local protection error (memory registration; GPUDirect RDMA?)"},
    {"IBV_WC_WR_FLUSH_ERR", "work request flushed (the QP was already in error)"},
    {"IBV_WC_MW_BIND_ERR", "memory window bind error"},
    {"IBV_WC_BAD_RESP_ERR", "bad response error"},
    {"IBV_WC_LOC_ACCESS_ERR", "local access error"},
    {"IBV_WC_REM_INV_REQ_ERR", "remote invalid request error"},
    {"IBV_WC_REM_ACCESS_ERR", "remote access error"},
    {"IBV_WC_REM_OP_ERR", "remote operation error"},
    {"IBV_WC_RETRY_EXC_ERR", "transport retry counter exceeded (peer unreachable or link lost)"},
    {"IBV_WC_RNR_RETRY_EXC_ERR", "RNR retry counter exceeded (receiver not ready)"},
    {"IBV_WC_LOC_RDD_VIOL_ERR", "local RDD violation error"},
    {"IBV_WC_REM_INV_RD_REQ_ERR", "remote invalid RD request"},
    {"IBV_WC_REM_ABORT_ERR", "remote aborted error"},
    {"IBV_WC_INV_EECN_ERR", "invalid EE context number"},
    {"IBV_WC_INV_EEC_STATE_ERR", "invalid EE context state"},
    {"IBV_WC_FATAL_ERR", "fatal error"},
    {"IBV_WC_RESP_TIMEOUT_ERR", "response timeout error"},
    {"IBV_WC_GENERAL_ERR", "general error"},
    {"IBV_WC_TM_ERR", "tag matching error"},
    {"IBV_WC_TM_RNDV_INCOMPLETE", "tag matching rendezvous incomplete"},
};

std::optional<int> IntOf(const PatternMatch& m, size_t group) {
  if (!m.matched(group)) return std::nullopt;
  return std::stoi(m.str(group));
}

// The text up to its first number or quote, trimmed of separators: lines of
// one kind with different peers, sizes or files share it.
std::string GroupOf(std::string_view text) {
  size_t end = 0;
  while (end < text.size() && !std::isdigit(static_cast<unsigned char>(text[end])) &&
         text[end] != '\'' && text[end] != '"' && text[end] != '<') {
    ++end;
  }
  std::string group(text.substr(0, end));
  while (!group.empty() && std::string_view(" :,=([").find(group.back()) != std::string::npos) {
    group.pop_back();
  }
  if (group.size() > 80) group.resize(80);
  return group.empty() ? std::string(text.substr(0, 80)) : group;
}

}  // namespace

const char* WcStatusName(int status) {
  if (status < 0 || status >= static_cast<int>(std::size(kWcStatuses))) return nullptr;
  return kWcStatuses[status].name;
}

const char* WcStatusMeaning(int status) {
  if (status < 0 || status >= static_cast<int>(std::size(kWcStatuses))) return nullptr;
  return kWcStatuses[status].meaning;
}

std::string DescribeWcStatus(int status) {
  std::string out = "status " + std::to_string(status);
  if (const char* name = WcStatusName(status)) {
    out += std::string(" (") + name + ": " + WcStatusMeaning(status) + ")";
  } else {
    out += " (not an ibv_wc_status)";
  }
  return out;
}

LogEventReading ReadLogEvent(const LogEventView& event) {
  // Shapes seen in NCCL 2.4..2.28 and nccl-tests (public NCCL issues #214,
  // #902 and others):
  //   NET/IB : Got completion with error 12, opcode 0, len 0, vendor err 129
  //   NET/IB : Got completion from peer 10.0.0.2<41234> with error 12, opcode 0, len 0,
  //     vendor err 129 (Recv) localGid ... remoteGids ... hca mlx5_0
  //   NET/IB : Got completion from peer 10.1.1.2<55438> with status=12 opcode=0 len=0
  //     vendor err 129 (Send) ... hca mlx5_3
  static const Pattern kCompletion(
      R"(Got completion(?: from peer (\S+))? with (?:error |status=)(?:IBV_WC_\w+\()?(\d+)\)?)");
  static const Pattern kOpcode(R"(opcode[ =](?:IBV_WC_\w+\()?(\d+))");
  static const Pattern kVendor(R"(vendor[ _]err[ =]?(\d+))");
  static const Pattern kHca(R"(\b(?:hca|dev(?:ice)?) '?([A-Za-z][\w.-]*))");
  static const Pattern kGdrHca(R"(NET/IB ?: GPU Direct RDMA Disabled for HCA (\d+) '([^']+)')");
  static const Pattern kPlugin(
      R"(NET/Plugin ?: (?:Plugin load .* returned [1-9]|Failed to find ncclNet|Load of .* failed|dlopen.*failed|Could not load))",
      Pattern::Case::kInsensitive);
  LogEventReading r;
  const std::string& text = event.text;
  PatternMatch m;
  // nccl-tests' failure line quotes NCCL's last error (often the completion
  // error WARN line printed just before it): it is the test's failure, not a
  // second completion error.
  const bool test_failure = event.level == "test" ||
                            text.find("Test NCCL failure") != std::string::npos ||
                            text.find("Test CUDA failure") != std::string::npos;
  if (!test_failure && kCompletion.Search(text, &m)) {
    r.kind = LogEventKind::kIbCompletionError;
    r.group = "NET/IB : Got completion with error";
    if (m.matched(1)) r.peer = m.str(1);
    r.wc_status = IntOf(m, 2);
    if (kOpcode.Search(text, &m)) r.opcode = IntOf(m, 1);
    if (kVendor.Search(text, &m)) r.vendor_err = IntOf(m, 1);
    if (kHca.Search(text, &m)) r.device = m.str(1);
    return r;
  }
  if (test_failure) {
    r.kind = LogEventKind::kTestFailure;
    r.group = GroupOf(text);
    return r;
  }
  if (text.find("NET/IB : No device found") != std::string::npos ||
      text.find("NET/IB: No device found") != std::string::npos) {
    r.kind = LogEventKind::kIbNoDevice;
    r.group = "NET/IB : No device found";
    return r;
  }
  if (text.find("Failed to open libibverbs") != std::string::npos) {
    r.kind = LogEventKind::kIbverbsMissing;
    r.group = "Failed to open libibverbs";
    return r;
  }
  if (kGdrHca.Search(text, &m)) {
    r.kind = LogEventKind::kGdrDisabledHca;
    r.group = "NET/IB : GPU Direct RDMA Disabled for HCA";
    r.hca_index = IntOf(m, 1);
    r.device = m.str(2);
    return r;
  }
  if (kPlugin.Search(text)) {
    r.kind = LogEventKind::kNetPluginFailed;
    r.group = "NET/Plugin load failed";
    return r;
  }
  r.kind = event.level == "warn" ? LogEventKind::kWarning : LogEventKind::kOther;
  r.group = GroupOf(text);
  return r;
}

}  // namespace fabtrack::analyzer

// The MAD edge of `fabtrack fabric scan` (libibnetdisc, libibmad, libibumad):
// discovery, then the PMA reads through one umad port with a window of MADs
// in flight, each with its own deadline and retries. What to ask is
// scan_plan.cc's; what came back is decoded by pma_decode.cc.
#include <infiniband/ibnetdisc.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <random>
#include <set>
#include <string_view>
#include <unordered_map>

#include "collector/counters/verbs_ports.h"
#include "collector/fabric/smp_walk.h"
#include "collector/fabric/subnet_scan.h"
#include "core/clock.h"

namespace fabtrack::fabric {
namespace {

using Clock = std::chrono::steady_clock;
using Mad = std::array<uint8_t, kMadSize>;
// libibnetdisc's node types are NodeInfo's codes, named by smp_walk's
// NodeTypeName for both discovery paths.
static_assert(IB_NODE_CA == kNodeTypeCa && IB_NODE_SWITCH == kNodeTypeSwitch &&
              IB_NODE_ROUTER == kNodeTypeRouter);

const char* PortStateName(int state) {
  static const char* kNames[] = {"NoChange", "Down", "Init", "Armed", "Active"};
  return state >= 0 && state <= 4 ? kNames[state] : "Unknown";
}

const char* PhysStateName(int state) {
  static const char* kNames[] = {"NoChange", "Sleep",  "Polling",           "Disabled",
                                 "Training", "LinkUp", "LinkErrorRecovery", "PhyTest"};
  return state >= 0 && state <= 7 ? kNames[state] : "Unknown";
}

// PortInfo:LinkWidthActive in lanes, as the verbs reader decodes it (0:
// a code IBTA does not define).
std::optional<int> ActiveLanes(int active) {
  const int lanes = WidthLanes(active);
  return lanes > 0 ? std::optional<int>(lanes) : std::nullopt;
}

// A lane speed code of PortInfo: its name and the lane rate in Gb/s as
// sysfs's rate file counts it (4X EDR: 100 Gb/sec).
struct LaneSpeedCode {
  int code;
  const char* name;
  double gbps;
};
constexpr LaneSpeedCode kLinkSpeedExtActive[] = {
    {1, "FDR", 14}, {2, "EDR", 25}, {4, "HDR", 50}, {8, "NDR", 100}};
constexpr LaneSpeedCode kLinkSpeedActive[] = {{1, "SDR", 2.5}, {2, "DDR", 5}, {4, "QDR", 10}};

// LinkSpeedExtActive (FDR and later) when set, else LinkSpeedActive.
std::optional<std::pair<std::string, double>> LaneSpeed(int active, int ext_active) {
  for (const LaneSpeedCode& s : kLinkSpeedExtActive) {
    if (s.code == ext_active) return std::pair<std::string, double>{s.name, s.gbps};
  }
  for (const LaneSpeedCode& s : kLinkSpeedActive) {
    if (s.code == active) return std::pair<std::string, double>{s.name, s.gbps};
  }
  return std::nullopt;
}

// The PortInfo fields a scan keeps, from an SMP's data (libibmad's getters
// take the buffer non-const).
PortInfoAnswer DecodePortInfo(uint8_t* data) {
  PortInfoAnswer a;
  a.lid = static_cast<int>(mad_get_field(data, 0, IB_PORT_LID_F));
  a.state = static_cast<int>(mad_get_field(data, 0, IB_PORT_STATE_F));
  a.phys_state = static_cast<int>(mad_get_field(data, 0, IB_PORT_PHYS_STATE_F));
  a.width_active = static_cast<int>(mad_get_field(data, 0, IB_PORT_LINK_WIDTH_ACTIVE_F));
  a.speed_active = static_cast<int>(mad_get_field(data, 0, IB_PORT_LINK_SPEED_ACTIVE_F));
  a.speed_ext_active = static_cast<int>(mad_get_field(data, 0, IB_PORT_LINK_SPEED_EXT_ACTIVE_F));
  return a;
}

FabricPort PortFromInfo(const PortInfoAnswer& info) {
  FabricPort out;
  out.state = PortStateName(info.state);
  out.phys_state = PhysStateName(info.phys_state);
  if (info.state >= 2) {  // width and speed mean something on a trained link only
    out.width = ActiveLanes(info.width_active);
    auto speed = LaneSpeed(info.speed_active, info.speed_ext_active);
    if (speed) {
      out.speed = speed->first;
      if (out.width) out.rate_gbps = *out.width * speed->second;
    }
  }
  return out;
}

FabricPort ReadPortInfo(const ibnd_node_t* node, const std::string& node_guid, ibnd_port_t* p) {
  FabricPort out = PortFromInfo(DecodePortInfo(p->info));
  out.node_guid = node_guid;
  out.port = p->portnum;
  // A switch's ports share its port 0 LID; the PMA answers there.
  int lid = node->type == IB_NODE_SWITCH ? node->smalid : p->base_lid;
  if (lid > 0) out.lid = lid;
  return out;
}

// Discovery into nodes, ports and links; a LinkUp switch port with nothing
// behind it is a node that did not answer.
std::optional<FabricScan> Discover(const ScanSettings& s, std::string* error) {
  ibnd_config_t config{};
  config.max_smps = static_cast<unsigned>(std::max(1, s.discovery_smps));
  config.timeout_ms = static_cast<unsigned>(s.policy.timeout_ms);
  config.retries = static_cast<unsigned>(s.policy.retries);
  std::string ca = s.ca;
  ibnd_fabric_t* fabric =
      ibnd_discover_fabric(ca.empty() ? nullptr : ca.data(), s.port, nullptr, &config);
  if (!fabric) {
    *error = "subnet discovery failed (no active InfiniBand port" +
             (ca.empty() ? std::string() : " on " + ca) + ", or no subnet manager)";
    return std::nullopt;
  }
  // Nodes in GUID order ("0x%016llx" sorts as the number does), each one's
  // ports in port order: the order SortFabricScan gives, so its sorts find
  // nothing to move on a subnet of thousands of ports.
  std::vector<ibnd_node_t*> by_guid;
  for (ibnd_node_t* n = fabric->nodes; n; n = n->next) by_guid.push_back(n);
  std::sort(by_guid.begin(), by_guid.end(),
            [](const ibnd_node_t* x, const ibnd_node_t* y) { return x->guid < y->guid; });
  FabricScan scan;
  for (ibnd_node_t* n : by_guid) {
    FabricNode node;
    node.guid = GuidText(n->guid);
    node.description.assign(n->nodedesc, strnlen(n->nodedesc, sizeof n->nodedesc));
    node.type = NodeTypeName(n->type);
    node.ports = n->numports;
    for (int i = 0; i <= n->numports; ++i) {
      ibnd_port_t* p = n->ports[i];
      if (!p) continue;
      FabricPort port = ReadPortInfo(n, node.guid, p);
      if (!node.lid && port.lid) node.lid = port.lid;
      if (p->remoteport) {
        ibnd_port_t* r = p->remoteport;
        // Each cable once: from the end that sorts first.
        FabricLinkEnd here{node.guid, node.description, p->portnum};
        std::string rdesc(r->node->nodedesc, strnlen(r->node->nodedesc, sizeof r->node->nodedesc));
        FabricLinkEnd there{GuidText(r->node->guid), rdesc, r->portnum};
        FabricLink link = MakeLink(here, node.type, there, NodeTypeName(r->node->type));
        if (link.a == here) scan.links.push_back(std::move(link));
      }
      scan.ports.push_back(std::move(port));
    }
    if (n->type == IB_NODE_SWITCH)
      node.lid = n->smalid > 0 ? std::optional<int>(n->smalid) : std::nullopt;
    scan.nodes.push_back(std::move(node));
  }
  // What did not answer, in discovery's own order (as before the sort above).
  for (ibnd_node_t* n = fabric->nodes; n; n = n->next) {
    if (n->type != IB_NODE_SWITCH) continue;
    for (int i = 1; i <= n->numports; ++i) {
      ibnd_port_t* p = n->ports[i];
      if (!p || p->remoteport) continue;
      const int phys = static_cast<int>(mad_get_field(p->info, 0, IB_PORT_PHYS_STATE_F));
      if (std::strcmp(PhysStateName(phys), "LinkUp") != 0) continue;
      std::string desc(n->nodedesc, strnlen(n->nodedesc, sizeof n->nodedesc));
      scan.unanswered.push_back({GuidText(n->guid), desc, i, "discovery",
                                 "the port is LinkUp but the node behind it did not answer"});
    }
  }
  ibnd_destroy_fabric(fabric);
  return scan;
}

uint32_t TidOf(const uint8_t* mad) {
  return static_cast<uint32_t>((uint32_t{mad[12]} << 24) | (uint32_t{mad[13]} << 16) |
                               (uint32_t{mad[14]} << 8) | mad[15]);
}

// The tries in flight of a window of MADs (the SMPs of discovery, the PMA
// queries), in the order sent: their transaction ids are consecutive (a
// reply's entry is found by subtraction; an id skipped is a closed entry)
// and, every try having the same timeout, their deadlines ascend (the first
// open one is the next to expire). Answered tries stay as closed entries
// until they reach the front.
class TriesInFlight {
 public:
  int open() const { return open_; }

  // A try of request `item` sent with `tid`: the id after the last try's,
  // or after one skipped (which stands as a closed entry).
  void Sent(size_t item, uint32_t tid, Clock::time_point deadline) {
    if (tries_.empty()) first_tid_ = tid;
    while (tries_.size() < static_cast<uint32_t>(tid - first_tid_))
      tries_.push_back({item, Clock::now(), false});
    tries_.push_back({item, deadline, true});
    ++open_;
  }

  // The request a reply with `tid` answers, its try closed; nullopt for a
  // reply to no open try (late, or not ours).
  std::optional<size_t> Answered(uint32_t tid) {
    const size_t at = static_cast<uint32_t>(tid - first_tid_);
    if (at >= tries_.size() || !tries_[at].open) return std::nullopt;
    tries_[at].open = false;
    --open_;
    const size_t item = tries_[at].item;
    DropClosed();
    return item;
  }

  // Milliseconds until the first open try's deadline (0 when past; none open: 0).
  int WaitMs(Clock::time_point now) const {
    for (const Try& t : tries_) {
      if (!t.open) continue;
      return std::max(
          0,
          static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(t.deadline - now).count()));
    }
    return 0;
  }

  // Closes the tries whose deadline has passed, calling expired(request) for
  // each that was still open.
  template <typename F>
  void Expire(Clock::time_point now, F expired) {
    while (!tries_.empty() && tries_.front().deadline <= now) {
      if (tries_.front().open) {
        tries_.front().open = false;
        --open_;
        expired(tries_.front().item);
      }
      tries_.pop_front();
      ++first_tid_;
      DropClosed();
    }
  }

 private:
  struct Try {
    size_t item;
    Clock::time_point deadline;
    bool open;
  };
  void DropClosed() {
    while (!tries_.empty() && !tries_.front().open) {
      tries_.pop_front();
      ++first_tid_;
    }
  }
  std::deque<Try> tries_;
  uint32_t first_tid_ = 0;
  int open_ = 0;
};

// Discovery with directed-route SMPs (smp_walk.cc says what is asked),
// `settings.discovery_smps` in flight at once through the umad port the PMA
// reads use, each with its own deadline and retries like those. What the
// walk has not reached when an SMP runs out of tries stays unreached: a
// LinkUp switch port without a far end is named in `unanswered`.
std::optional<FabricScan> DiscoverBySmps(ibmad_port* port, const ScanSettings& s, int64_t* sent,
                                         int64_t* retried, std::string* error) {
  const int fd = mad_rpc_portid(port);
  const int agent = mad_rpc_class_agent(port, IB_SMI_DIRECT_CLASS);
  if (agent < 0) {
    *error = "cannot register the directed-route SMP agent";
    return std::nullopt;
  }
  SmpWalk walk;
  std::vector<SmpRequest> requests{walk.Start()};
  std::vector<int> tries_of{0};
  std::deque<size_t> waiting{0};
  TriesInFlight tries;
  uint32_t next_tid = std::random_device{}();
  bool local_answered = false;
  const int window = std::max(1, s.discovery_smps);
  const auto timeout = std::chrono::milliseconds(s.policy.timeout_ms);
  std::vector<uint8_t> send_buf(umad_size() + IB_MAD_SIZE), recv_buf(umad_size() + IB_MAD_SIZE);
  std::vector<SmpRequest> next;
  auto send = [&](size_t r, uint32_t tid) {
    const SmpRequest& q = requests[r];
    ib_rpc_t rpc{};
    rpc.mgtclass = IB_SMI_DIRECT_CLASS;
    rpc.method = IB_MAD_METHOD_GET;
    rpc.attr.id = q.kind == SmpRequest::kNodeInfo          ? IB_ATTR_NODE_INFO
                  : q.kind == SmpRequest::kNodeDescription ? IB_ATTR_NODE_DESC
                                                           : IB_ATTR_PORT_INFO;
    rpc.attr.mod = q.kind == SmpRequest::kPortInfo ? static_cast<unsigned>(q.port) : 0;
    rpc.datasz = IB_SMP_DATA_SIZE;
    rpc.dataoffs = IB_SMP_DATA_OFFS;
    rpc.timeout = s.policy.timeout_ms;
    rpc.trid = tid ? tid : 1;  // 0 would be replaced by a random one
    ib_portid_t dport{};
    dport.drpath.cnt = static_cast<int>(q.path.size());
    std::copy(q.path.begin(), q.path.end(), dport.drpath.p + 1);
    std::fill(send_buf.begin(), send_buf.end(), 0);
    int length = mad_build_pkt(send_buf.data(), &rpc, &dport, nullptr, nullptr);
    if (length < 0) return false;
    return umad_send(fd, agent, send_buf.data(), length, s.policy.timeout_ms, 0) == 0;
  };
  auto give_up_or_requeue = [&](size_t r) {
    if (tries_of[r] <= s.policy.retries) {
      waiting.push_front(r);
      ++*retried;
    } else {
      walk.NoAnswer(requests[r]);
    }
  };
  auto add_next = [&] {
    for (SmpRequest& q : next) {
      requests.push_back(std::move(q));
      tries_of.push_back(0);
      waiting.push_back(requests.size() - 1);
    }
    next.clear();
  };
  while (!waiting.empty() || tries.open() > 0) {
    while (!waiting.empty() && tries.open() < window) {
      size_t r = waiting.front();
      waiting.pop_front();
      ++tries_of[r];
      uint32_t tid = next_tid ? next_tid : ++next_tid;
      if (!send(r, tid)) {
        walk.NoAnswer(requests[r]);
        continue;
      }
      // Consecutive ids (0 is skipped above: a gap is a closed entry).
      next_tid = tid + 1;
      ++*sent;
      tries.Sent(r, tid, Clock::now() + timeout);
    }
    if (tries.open() == 0) continue;
    int length = IB_MAD_SIZE;
    int got = umad_recv(fd, recv_buf.data(), &length, tries.WaitMs(Clock::now()));
    if (got >= 0) {
      uint8_t* mad = static_cast<uint8_t*>(umad_get_mad(recv_buf.data()));
      if (std::optional<size_t> answered = tries.Answered(TidOf(mad))) {
        const size_t r = *answered;
        const int status = umad_status(recv_buf.data());
        if (status != 0 || length < IB_MAD_SIZE) {
          give_up_or_requeue(r);
        } else if (mad_get_field(mad, 0, IB_DRSMP_STATUS_F) != 0) {
          walk.NoAnswer(requests[r]);  // answered, but with an error: asking again would too
        } else {
          uint8_t* data = mad + IB_SMP_DATA_OFFS;
          const SmpRequest& q = requests[r];
          switch (q.kind) {
            case SmpRequest::kNodeInfo: {
              NodeInfoAnswer a;
              a.type = static_cast<int>(mad_get_field(data, 0, IB_NODE_TYPE_F));
              a.ports = static_cast<int>(mad_get_field(data, 0, IB_NODE_NPORTS_F));
              a.node_guid = mad_get_field64(data, 0, IB_NODE_GUID_F);
              a.local_port = static_cast<int>(mad_get_field(data, 0, IB_NODE_LOCAL_PORT_F));
              if (q.from_node < 0) local_answered = true;
              walk.OnNodeInfo(q, a, &next);
              break;
            }
            case SmpRequest::kNodeDescription:
              walk.OnNodeDescription(
                  q, std::string(reinterpret_cast<const char*>(data), IB_SMP_DATA_SIZE));
              break;
            case SmpRequest::kPortInfo: {
              PortInfoAnswer a = DecodePortInfo(data);
              walk.OnPortInfo(q, a, &next);
              break;
            }
          }
          add_next();
        }
      }
    }
    tries.Expire(Clock::now(), give_up_or_requeue);
  }
  if (!local_answered) {
    *error = "subnet discovery failed (the local port's NodeInfo got no answer)";
    return std::nullopt;
  }
  return walk.Result(PortFromInfo);
}

struct Reply {
  std::optional<Mad> mad;
  std::string error;  // the last try's trouble, when nothing usable came
  int tries = 0;
};

// Sends every query through one umad port, `window` at a time; each try
// has its own deadline and a fresh transaction id, so a late answer to an
// abandoned try is dropped.
class PmaWindow {
 public:
  PmaWindow(ibmad_port* port, const ScanPolicy& policy)
      : fd_(mad_rpc_portid(port)),
        agent_(mad_rpc_class_agent(port, IB_PERFORMANCE_CLASS)),
        policy_(policy),
        next_tid_(std::random_device{}()) {}

  std::vector<Reply> Run(const std::vector<PmaQuery>& queries, int64_t* sent, int64_t* retried) {
    std::vector<Reply> replies(queries.size());
    std::deque<size_t> waiting;
    for (size_t i = 0; i < queries.size(); ++i) waiting.push_back(i);
    TriesInFlight tries;
    std::vector<uint8_t> send_buf(umad_size() + IB_MAD_SIZE), recv_buf(umad_size() + IB_MAD_SIZE);
    auto timeout = std::chrono::milliseconds(policy_.timeout_ms);
    auto give_up_or_requeue = [&](size_t q, const std::string& why) {
      replies[q].error = why;
      if (replies[q].tries <= policy_.retries) {
        waiting.push_front(q);
        ++*retried;
      }
    };
    while (!waiting.empty() || tries.open() > 0) {
      while (!waiting.empty() && tries.open() < policy_.window) {
        size_t q = waiting.front();
        waiting.pop_front();
        ++replies[q].tries;
        if (!Send(queries[q], next_tid_, send_buf)) {
          replies[q].error = std::string("umad_send: ") + std::strerror(errno);
          continue;
        }
        tries.Sent(q, next_tid_, Clock::now() + timeout);
        ++next_tid_;
        ++*sent;
      }
      if (tries.open() == 0) continue;
      int length = IB_MAD_SIZE;
      int got = umad_recv(fd_, recv_buf.data(), &length, tries.WaitMs(Clock::now()));
      if (got >= 0) {
        const uint8_t* mad = static_cast<const uint8_t*>(umad_get_mad(recv_buf.data()));
        if (std::optional<size_t> answered = tries.Answered(TidOf(mad))) {
          const size_t q = *answered;
          int status = umad_status(recv_buf.data());
          if (status != 0) {
            // The kernel gave the send back: timed out or failed on its side.
            give_up_or_requeue(q, status == ETIMEDOUT ? "no answer" : std::strerror(status));
          } else if (length < static_cast<int>(kMadSize)) {
            give_up_or_requeue(q, "short reply (" + std::to_string(length) + " bytes)");
          } else {
            Mad copy;
            std::memcpy(copy.data(), mad, kMadSize);
            replies[q].mad = copy;
            replies[q].error.clear();
          }
        }
      }
      tries.Expire(Clock::now(), [&](size_t q) { give_up_or_requeue(q, "no answer"); });
    }
    return replies;
  }

 private:
  // The packet of an attribute, built once by libibmad; each send copies it
  // and sets what differs (transaction id, PortSelect, destination LID):
  // encoding every field anew was a tenth of a scan's own instructions.
  struct Packet {
    std::vector<uint8_t> bytes;
    int length = -1;
  };
  const Packet& PacketOf(uint16_t attribute) {
    for (auto& [attr, packet] : packets_) {
      if (attr == attribute) return packet;
    }
    Packet packet;
    packet.bytes.assign(umad_size() + IB_MAD_SIZE, 0);
    ib_rpc_t rpc{};
    rpc.mgtclass = IB_PERFORMANCE_CLASS;
    rpc.method = IB_MAD_METHOD_GET;
    rpc.attr.id = attribute;
    rpc.attr.mod = 0;
    rpc.datasz = IB_PC_DATA_SZ;
    rpc.dataoffs = IB_PC_DATA_OFFS;
    rpc.trid = 1;  // set per send; not 0, which libibmad would replace by a random one
    uint8_t data[IB_PC_DATA_SZ] = {};
    ib_portid_t dport{};
    ib_portid_set(&dport, 1, 1, IB_DEFAULT_QP1_QKEY);
    packet.length = mad_build_pkt(packet.bytes.data(), &rpc, &dport, nullptr, data);
    packets_.emplace_back(attribute, std::move(packet));
    return packets_.back().second;
  }

  bool Send(const PmaQuery& query, uint32_t tid, std::vector<uint8_t>& buf) {
    const Packet& packet = PacketOf(query.attribute);
    if (packet.length < 0) {
      errno = EINVAL;
      return false;
    }
    std::memcpy(buf.data(), packet.bytes.data(), packet.bytes.size());
    uint8_t* mad = static_cast<uint8_t*>(umad_get_mad(buf.data()));
    // TransactionID (MAD bytes 8..15, big-endian): the tid, upper half 0.
    std::memset(mad + 8, 0, 4);
    mad[12] = static_cast<uint8_t>(tid >> 24);
    mad[13] = static_cast<uint8_t>(tid >> 16);
    mad[14] = static_cast<uint8_t>(tid >> 8);
    mad[15] = static_cast<uint8_t>(tid);
    if (query.attribute != kClassPortInfo)
      mad[IB_PC_DATA_OFFS + 1] = static_cast<uint8_t>(query.port);  // PortSelect
    umad_set_addr(buf.data(), query.lid, 1, 0, IB_DEFAULT_QP1_QKEY);
    return umad_send(fd_, agent_, buf.data(), packet.length, policy_.timeout_ms, 0) == 0;
  }

  std::vector<std::pair<uint16_t, Packet>> packets_;
  int fd_, agent_;
  ScanPolicy policy_;
  uint32_t next_tid_;
};

std::string Describe(const FabricScan& scan, const std::string& guid) {
  const FabricNode* n = FindFabricNode(scan, guid);
  return n ? n->description : "";
}

}  // namespace

bool SubnetScanBuilt() { return true; }

ScanOutcome ScanSubnet(const ScanSettings& settings) {
  auto started = Clock::now();
  ScanOutcome out;
  std::string error;
  std::string ca = settings.ca;
  const std::string no_port = "subnet discovery failed (no active InfiniBand port" +
                              (ca.empty() ? std::string() : " on " + ca) +
                              ", or no subnet manager)";
  // One umad port for discovery's SMPs and the PMA reads (libibnetdisc, when
  // asked for, opens its own).
  int classes[] = {IB_SMI_DIRECT_CLASS, IB_PERFORMANCE_CLASS};
  std::optional<FabricScan> scan;
  ibmad_port* port = nullptr;
  if (settings.discovery == DiscoveryEngine::kLibibnetdisc) {
    scan = Discover(settings, &error);
    if (!scan) {
      out.error = error;
      return out;
    }
    port = mad_rpc_open_port(ca.empty() ? nullptr : ca.data(), settings.port, classes + 1, 1);
    if (!port) {
      out.error = "cannot open the MAD port of " + (ca.empty() ? std::string("the first CA") : ca);
      return out;
    }
  } else {
    port = mad_rpc_open_port(ca.empty() ? nullptr : ca.data(), settings.port, classes, 2);
    if (!port) {
      out.error = no_port;
      return out;
    }
    int64_t smps = 0, smps_retried = 0;
    scan = DiscoverBySmps(port, settings, &smps, &smps_retried, &error);
    if (!scan) {
      mad_rpc_close_port(port);
      out.error = error.empty() ? no_port : error;
      return out;
    }
  }
  scan->discovery_s = std::chrono::duration<double>(Clock::now() - started).count();
  umad_port_t local{};
  if (umad_get_port(ca.empty() ? nullptr : ca.c_str(), settings.port, &local) == 0) {
    scan->source = std::string(local.ca_name) + "/" + std::to_string(local.portnum);
    umad_release_port(&local);
  }
  PmaWindow window(port, settings.policy);
  std::string no_answer = NoAnswerText(settings.policy);
  scan->scanned_at = UtcNowIso();

  std::vector<PmaQuery> cap_queries = PlanCapabilityReads(*scan);
  std::vector<Reply> cap_replies = window.Run(cap_queries, &scan->mads_sent, &scan->mads_retried);
  std::map<std::string, PmaCapabilities> caps;
  for (size_t i = 0; i < cap_queries.size(); ++i) {
    const PmaQuery& q = cap_queries[i];
    std::string why = cap_replies[i].error;
    if (cap_replies[i].mad) {
      if (auto c = DecodeClassPortInfo(*cap_replies[i].mad, &why)) {
        caps[q.guid] = *c;
        continue;
      }
    }
    scan->unanswered.push_back({q.guid, Describe(*scan, q.guid), std::nullopt, "ClassPortInfo",
                                why == "no answer" ? no_answer : why});
  }

  // Switches whose AllPortSelect sum shows no error: their ports' error
  // counters are known to be zero, and PortCountersExtended per port reads
  // the rest. A sum that does not answer or shows an error changes nothing:
  // those ports are asked PortCounters as well (and say so if they do not
  // answer either).
  std::set<std::string> errors_zero;
  std::vector<PmaQuery> sums = PlanAggregateReads(*scan, caps, settings.errors_only);
  std::vector<Reply> sum_replies = window.Run(sums, &scan->mads_sent, &scan->mads_retried);
  for (size_t i = 0; i < sums.size(); ++i) {
    if (!sum_replies[i].mad) continue;
    const bool xmit_wait = caps[sums[i].guid].xmit_wait();
    auto sum = DecodePortCounters(*sum_replies[i].mad, kAllPorts, xmit_wait, nullptr);
    if (sum && ErrorsKnownZero(*sum, xmit_wait)) errors_zero.insert(sums[i].guid);
  }

  std::vector<PmaQuery> reads = PlanCounterReads(*scan, caps, errors_zero, settings.errors_only);
  std::vector<Reply> replies = window.Run(reads, &scan->mads_sent, &scan->mads_retried);
  // Each node's ports by number (the reads name them by GUID and port).
  std::unordered_map<std::string_view, std::vector<FabricPort*>> ports;
  for (FabricPort& p : scan->ports) {
    std::vector<FabricPort*>& of_node = ports[p.node_guid];
    if (of_node.size() <= static_cast<size_t>(p.port)) of_node.resize(p.port + 1);
    of_node[p.port] = &p;
  }
  auto find_port = [&ports](const PmaQuery& q) -> FabricPort* {
    auto it = ports.find(q.guid);
    if (it == ports.end() || q.port < 0 || static_cast<size_t>(q.port) >= it->second.size())
      return nullptr;
    return it->second[q.port];
  };
  for (size_t i = 0; i < reads.size(); ++i) {
    const PmaQuery& q = reads[i];
    FabricPort* p = find_port(q);
    std::string why = replies[i].error;
    if (q.attribute == kPortCountersExtended && p && replies[i].mad) {
      // Straight into the port: extended (64-bit) data counters win over the
      // legacy 32-bit ones of the same names.
      const PmaCapabilities& cap = caps[q.guid];
      const bool additional = cap.additional_extended();
      if (DecodePortCountersExtendedInto(*replies[i].mad, q.port, &p->counters, &why, additional,
                                         cap.xmit_wait())) {
        p->counters_64bit = true;
        continue;
      }
    }
    std::optional<std::map<std::string, uint64_t>> counters;
    if (replies[i].mad && why.empty()) {
      counters = q.attribute == kPortCounters
                     ? DecodePortCounters(*replies[i].mad, q.port, caps[q.guid].xmit_wait(), &why)
                     : DecodePortCountersExtended(*replies[i].mad, q.port, &why);
    }
    if (!counters) {
      const char* what = q.attribute == kPortCounters ? "PortCounters" : "PortCountersExtended";
      scan->unanswered.push_back(
          {q.guid, Describe(*scan, q.guid), q.port, what, why == "no answer" ? no_answer : why});
      if (p && !p->counters_missing) p->counters_missing = std::string(what) + ": " + why;
      continue;
    }
    if (!p) continue;
    if (p->counters.empty()) {
      p->counters = std::move(*counters);
    } else {
      // Extended (64-bit) data counters win over the legacy 32-bit ones,
      // whichever answer came first.
      for (auto& [name, value] : *counters) {
        if (q.attribute == kPortCounters && p->counters_64bit && p->counters.count(name)) continue;
        p->counters.insert_or_assign(name, value);
      }
    }
    if (q.attribute == kPortCountersExtended) p->counters_64bit = true;
  }
  // What the receive errors were, where a port has counted any. A PMA
  // without PortRcvErrorDetails (an optional attribute) or one that does not
  // answer it leaves the port as it was: its counters were read.
  std::vector<PmaQuery> details = PlanRcvErrorDetailReads(*scan);
  std::vector<Reply> detail_replies = window.Run(details, &scan->mads_sent, &scan->mads_retried);
  mad_rpc_close_port(port);
  for (size_t i = 0; i < details.size(); ++i) {
    FabricPort* p = find_port(details[i]);
    if (p && detail_replies[i].mad)
      DecodePortRcvErrorDetailsInto(*detail_replies[i].mad, details[i].port, &p->counters, nullptr);
  }
  // The ports not asked PortCounters because their switch's sum said their
  // error counters are zero (a port whose other read failed stays without).
  for (FabricPort& p : scan->ports) {
    if (p.port == 0 || p.counters_missing || !errors_zero.count(p.node_guid)) continue;
    for (const std::string& name : ErrorCounterNames(caps[p.node_guid].xmit_wait()))
      p.counters.try_emplace(name, 0);
  }
  SortFabricScan(*scan);
  scan->duration_s = std::chrono::duration<double>(Clock::now() - started).count();
  out.scan = std::move(scan);
  return out;
}

}  // namespace fabtrack::fabric

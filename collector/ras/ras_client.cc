// The status query of ras_client.h over one RasConnection (its sockets and
// deadline), and the reverse lookup of a node's address.
#include "collector/ras/ras_client.h"

#include <netdb.h>
#include <sys/socket.h>

#include "collector/ras/ras_connection.h"

namespace fabtrack::ras {

Reply Query(const QueryOptions& o) {
  RasConnection c(o, "",
                  ": is an NCCL >= 2.24 job running there with RAS enabled (NCCL_RAS_ENABLE, "
                  "NCCL_RAS_ADDR)?");
  c.Connect(o.host, o.port);
  Reply reply;
  c.Send("CLIENT PROTOCOL 2\n");
  std::string hello = c.ReadLine("CLIENT PROTOCOL");
  const std::string kServer = "SERVER PROTOCOL ";
  if (hello.compare(0, kServer.size(), kServer) != 0) {
    c.Fail("not a RAS server (answered \"" + hello.substr(0, 80) + "\" to CLIENT PROTOCOL)");
  }
  reply.server_protocol = hello.substr(kServer.size());
  if (o.gather_timeout_s > 0) {
    c.Send("TIMEOUT " + std::to_string(o.gather_timeout_s) + "\n");
    std::string ok = c.ReadLine("TIMEOUT");
    if (ok != "OK") {
      c.Fail("refused TIMEOUT: " + ok.substr(0, 80));
    }
  }
  reply.format = "text";
  if (o.json) {
    c.Send("SET FORMAT json\n");
    std::string ok = c.ReadLine("SET FORMAT");
    if (ok == "OK") {
      reply.format = "json";
    } else {
      // Before 2.28.7: "ERROR: Unknown command set format json"; the text report it is.
      reply.format_refusal = ok.substr(0, 200);
    }
  }
  c.Send(o.verbose ? "VERBOSE STATUS\n" : "STATUS\n");
  reply.body = c.ReadToClose();
  if (reply.body.empty()) {
    c.Fail("the server closed the connection without a report");
  }
  return reply;
}

std::optional<std::string> LookUpHost(const std::string& address) {
  addrinfo hints{};
  hints.ai_flags = AI_NUMERICHOST;
  hints.ai_family = AF_UNSPEC;
  addrinfo* found = nullptr;
  if (getaddrinfo(address.c_str(), nullptr, &hints, &found) != 0) {
    // Not an address: RAS printed a name.
    if (address.empty()) return std::nullopt;
    return address.substr(0, address.find('.'));
  }
  char name[NI_MAXHOST] = {0};
  int rc =
      getnameinfo(found->ai_addr, found->ai_addrlen, name, sizeof(name), nullptr, 0, NI_NAMEREQD);
  freeaddrinfo(found);
  if (rc != 0) return std::nullopt;
  std::string host = name;
  return host.substr(0, host.find('.'));
}

}  // namespace fabtrack::ras

// The hosts of a run, shared between runs that ran on the same ones. A
// cluster's nightly sweeps repeat the same host lists night after night: three
// years of a 4096-node sweep are ~10^7 host names but a handful of distinct
// lists, so the analysis reader loads each distinct list once and every run
// that used it points to it. Reads like a const std::vector<std::string>;
// changing it copies the list first (copy on write), so a run never changes
// another's hosts.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace fabtrack {

class HostList {
 public:
  using Hosts = std::vector<std::string>;
  using value_type = std::string;
  using const_iterator = Hosts::const_iterator;

  HostList() = default;
  HostList(Hosts hosts) : hosts_(std::make_shared<const Hosts>(std::move(hosts))) {}
  HostList(std::initializer_list<std::string> hosts) : HostList(Hosts(hosts)) {}
  // Shares `hosts` (nullptr: no hosts).
  explicit HostList(std::shared_ptr<const Hosts> hosts) : hosts_(std::move(hosts)) {}

  const Hosts& vector() const { return hosts_ ? *hosts_ : Empty(); }
  operator const Hosts&() const { return vector(); }

  const_iterator begin() const { return vector().begin(); }
  const_iterator end() const { return vector().end(); }
  size_t size() const { return vector().size(); }
  bool empty() const { return vector().empty(); }
  const std::string& front() const { return vector().front(); }
  const std::string& back() const { return vector().back(); }
  const std::string& operator[](size_t i) const { return vector()[i]; }

  void push_back(std::string host) {
    Hosts copy = vector();
    copy.push_back(std::move(host));
    hosts_ = std::make_shared<const Hosts>(std::move(copy));
  }

  friend bool operator==(const HostList& a, const HostList& b) {
    return a.hosts_ == b.hosts_ || a.vector() == b.vector();
  }

 private:
  static const Hosts& Empty() {
    static const Hosts empty;
    return empty;
  }
  std::shared_ptr<const Hosts> hosts_;
};

}  // namespace fabtrack

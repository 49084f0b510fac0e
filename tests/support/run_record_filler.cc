#include "tests/support/run_record_filler.h"

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace fabtrack::testing {
namespace {

template <typename T, typename U>
concept Like = std::same_as<std::remove_const_t<T>, U>;

// FABTRACK_FIELDS(Type, every field of Type in declaration order): Fields(x)
// ties the fields of x (const or not), FieldNames(x) names them. The
// structured binding must name every field: when Type gains one, this file
// does not compile until it is added here (see the header).
#define FABTRACK_FIELDS(Type, ...) \
  template <Like<Type> T>          \
  auto Fields(T& x) {              \
    auto& [__VA_ARGS__] = x;       \
    return std::tie(__VA_ARGS__);  \
  }                                \
  [[maybe_unused]] std::string_view FieldNames(const Type&) { return #__VA_ARGS__; }

// core/model.h
FABTRACK_FIELDS(Measurement, time_us, algbw_gbps, busbw_gbps, wrong, max_error, iter_min_us,
                iter_max_us, iter_p50_us, iter_p99_us, iter_cv_pct)
FABTRACK_FIELDS(SizeRow, size_bytes, count, type, redop, root, oop, ip, line)
FABTRACK_FIELDS(RankDevice, rank, group, pid, host, device, bus_id, gpu_model)
FABTRACK_FIELDS(NetDevice, host, index, name, port, link, sharp)
FABTRACK_FIELDS(ChannelObservation, host, pid, cuda_device, channel, conn_index, from_rank, to_rank,
                from_bus_id, to_bus_id, direction, family, detail, nic_index, gdrdma, is_ring_line,
                line)
FABTRACK_FIELDS(LogMessage, host, level, text, line)
// core/run_record.h
FABTRACK_FIELDS(LatencySummary, mean_us, p50_us, p90_us, p99_us, min_us, max_us, stddev_us, cv,
                ip_p50_us, ip_p99_us, ip_cv, straggler_host, straggler_rank, straggler_excess_us)
FABTRACK_FIELDS(ResultRow, row, latency)
FABTRACK_FIELDS(LatencySample, row_index, in_place, iteration, latency_us)
FABTRACK_FIELDS(RankTiming, row_index, in_place, rank, host, mean_us, p50_us, p99_us, max_us,
                lateness_us)
FABTRACK_FIELDS(LinkProbeResult, host_a, host_b, bytes, seconds, gbps)
FABTRACK_FIELDS(StepSample, step, step_ms, compute_ms, exposed_ms)
FABTRACK_FIELDS(StepSummary, model_params, grad_dtype, grad_bytes, bucket_bytes, buckets,
                forward_ms, backward_ms, steps, step_ms_p50, step_ms_p90, step_ms_p99, step_ms_max,
                step_ms_mean, compute_ms_p50, exposed_ms_p50, exposed_ms_p99, exposed_ms_mean,
                idle_share_p50, idle_share_mean)
FABTRACK_FIELDS(RunRecord, cluster, started_at, ended_at, source, backend, collective, dtype, redop,
                ranks, nodes, gpus_per_node, ranks_per_node, hosts, gpu_model, nccl_version,
                cuda_version, driver_version, mpi_version, nccl_tests_version, network, transports,
                gdrdma, command_line, nccl_env, node_facts, slurm_job_id, slurm_step_id, tags,
                sweep_id, parameters, warmup_iters, iters, avg_busbw_gbps, oob_ok, oob_count,
                source_file, content_hash, table_index, status, rank_devices, results,
                latency_samples, rank_timings, net_devices, channels, log_events, link_probes,
                link_straggler_host, machines, max_ranks_per_machine, cpus_per_machine, step,
                step_samples)

#undef FABTRACK_FIELDS

template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};
template <typename T>
struct IsMap : std::false_type {};
template <typename K, typename V>
struct IsMap<std::map<K, V>> : std::true_type {};

template <typename T>
concept Struct = requires(T& x) {
  Fields(x);
};

std::vector<std::string> SplitNames(std::string_view names) {
  std::vector<std::string> out;
  while (!names.empty()) {
    const size_t comma = names.find(',');
    std::string_view name = names.substr(0, comma);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    out.emplace_back(name);
    names = comma == std::string_view::npos ? std::string_view() : names.substr(comma + 1);
  }
  return out;
}

std::string Child(const std::string& path, const std::string& name) {
  return path.empty() ? name : path + "." + name;
}

template <typename Tuple, typename Visit, size_t... I>
void VisitFieldPairs(const std::vector<std::string>& names, const Tuple& a, const Tuple& b,
                     Visit& visit, std::index_sequence<I...>) {
  (visit(names[I], std::get<I>(a), std::get<I>(b)), ...);
}

// Calls visit(name, field_of_a, field_of_b) for each field of two structs.
template <Struct T, typename Visit>
void ForEachFieldPair(const T& a, const T& b, Visit visit) {
  const auto fa = Fields(a);
  const auto fb = Fields(b);
  VisitFieldPairs(SplitNames(FieldNames(a)), fa, fb, visit,
                  std::make_index_sequence<std::tuple_size_v<decltype(fa)>>{});
}

class Filler {
 public:
  template <typename T>
  void Fill(T& x) {
    if constexpr (std::is_same_v<T, RunStatus>) {
      x = RunStatus::kPartial;  // the default is kComplete
    } else if constexpr (std::is_same_v<T, bool>) {
      x = true;
    } else if constexpr (std::is_same_v<T, int64_t>) {
      x = (int64_t{1} << 40) + Next();  // would not survive a detour through int
    } else if constexpr (std::is_integral_v<T>) {
      x = static_cast<T>(Next());
    } else if constexpr (std::is_floating_point_v<T>) {
      x = Next() + 0.25;
    } else if constexpr (std::is_same_v<T, std::string>) {
      x = "s" + std::to_string(Next()) + " \"ü\"\t\\";
    } else if constexpr (IsOptional<T>::value) {
      typename T::value_type value{};
      Fill(value);
      x = std::move(value);
    } else if constexpr (IsVector<T>::value) {
      x.resize(2);
      for (auto& element : x) Fill(element);
    } else if constexpr (IsMap<T>::value) {
      for (int i = 0; i < 2; ++i) {
        typename T::key_type key{};
        typename T::mapped_type value{};
        Fill(key);
        Fill(value);
        x.emplace(std::move(key), std::move(value));
      }
    } else {
      static_assert(Struct<T>, "name the struct's fields with FABTRACK_FIELDS above");
      std::apply([this](auto&... field) { (Fill(field), ...); }, Fields(x));
    }
  }

 private:
  int Next() { return ++counter_; }
  int counter_ = 0;
};

template <typename T>
void Diff(const T& a, const T& b, const std::string& path, std::vector<std::string>* out) {
  if (a == b) return;
  if constexpr (IsOptional<T>::value) {
    if (a && b) return Diff(*a, *b, path, out);
    out->push_back(path + (a ? " (absent in the second)" : " (absent in the first)"));
  } else if constexpr (IsVector<T>::value) {
    if (a.size() != b.size()) return out->push_back(path + ".size()");
    for (size_t i = 0; i < a.size(); ++i) {
      Diff(a[i], b[i], path + "[" + std::to_string(i) + "]", out);
    }
  } else if constexpr (Struct<T>) {
    ForEachFieldPair(a, b, [&](const std::string& name, const auto& x, const auto& y) {
      Diff(x, y, Child(path, name), out);
    });
  } else {
    out->push_back(path);  // a leaf, or a map
  }
}

template <typename T>
void Defaults(const T& x, const std::string& path, std::vector<std::string>* out) {
  if constexpr (IsOptional<T>::value) {
    if (!x) return out->push_back(path);
    Defaults(*x, path, out);
  } else if constexpr (IsVector<T>::value) {
    if (x.empty()) return out->push_back(path);
    for (size_t i = 0; i < x.size(); ++i) {
      Defaults(x[i], path + "[" + std::to_string(i) + "]", out);
    }
  } else if constexpr (Struct<T>) {
    ForEachFieldPair(x, x, [&](const std::string& name, const auto& field, const auto&) {
      Defaults(field, Child(path, name), out);
    });
  } else if (x == T{}) {
    out->push_back(path);
  }
}

}  // namespace

RunRecord FilledRunRecord() {
  RunRecord run;
  Filler().Fill(run);
  return run;
}

std::vector<std::string> Differences(const RunRecord& a, const RunRecord& b) {
  std::vector<std::string> out;
  Diff(a, b, "", &out);
  return out;
}

std::vector<std::string> DefaultFields(const RunRecord& run) {
  std::vector<std::string> out;
  Defaults(run, "", &out);
  return out;
}

}  // namespace fabtrack::testing

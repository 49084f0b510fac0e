// The MPI backend: MPI_Allreduce on host buffers. Over Open MPI's TCP
// transport this is the "Ethernet without RDMA" path, and the way the whole
// pipeline runs on machines without GPUs.
#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "collector/harness/backend.h"
#include "collector/harness/check_pattern.h"
#include "collector/harness/mpi_steps.h"

namespace fabtrack::harness {
namespace {

MPI_Datatype ToMpi(DataType t) {
  switch (t) {
    case DataType::kInt8:
      return MPI_INT8_T;
    case DataType::kUint8:
      return MPI_UINT8_T;
    case DataType::kInt32:
      return MPI_INT32_T;
    case DataType::kUint32:
      return MPI_UINT32_T;
    case DataType::kInt64:
      return MPI_INT64_T;
    case DataType::kUint64:
      return MPI_UINT64_T;
    case DataType::kFloat:
      return MPI_FLOAT;
    case DataType::kDouble:
      return MPI_DOUBLE;
    case DataType::kHalf:
    case DataType::kBfloat16:
      break;  // refused by Validate()
  }
  throw std::invalid_argument("MPI backend: unsupported data type");
}

MPI_Op ToMpi(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return MPI_SUM;
    case ReduceOp::kProd:
      return MPI_PROD;
    case ReduceOp::kMax:
      return MPI_MAX;
    case ReduceOp::kMin:
      return MPI_MIN;
    case ReduceOp::kAvg:
      break;  // refused by Validate()
  }
  throw std::invalid_argument("MPI backend: unsupported reduction");
}

class MpiBackend : public AllReduceBackend {
 public:
  MpiBackend(const HarnessOptions& options, const RankPlacement& placement)
      : options_(options), placement_(placement) {}

  const char* name() const override { return "mpi"; }

  void Prepare(int64_t max_bytes) override {
    send_.assign(static_cast<size_t>(max_bytes), 0);
    recv_.assign(static_cast<size_t>(max_bytes), 0);
  }

  void FillInputs(int64_t count, bool in_place) override {
    WithElementType(options_.dtype, [&](auto zero) {
      using T = decltype(zero);
      T* in = reinterpret_cast<T*>(in_place ? recv_.data() : send_.data());
      for (int64_t i = 0; i < count; ++i) {
        in[i] = static_cast<T>(PatternValue(options_.op, placement_.rank, placement_.ranks, i));
      }
      if (!in_place) std::memset(recv_.data(), 0, count * sizeof(T));
    });
  }

  double RunOnce(int64_t count, bool in_place) override {
    double start = MPI_Wtime();
    // MPI counts are int: larger messages go as several calls would change
    // the measurement, so Validate()'s 1 TiB cap and int counts are checked here.
    if (count > INT32_MAX) throw std::invalid_argument("MPI backend: count exceeds INT_MAX");
    int rc =
        MPI_Allreduce(in_place ? MPI_IN_PLACE : send_.data(), recv_.data(), static_cast<int>(count),
                      ToMpi(options_.dtype), ToMpi(options_.op), MPI_COMM_WORLD);
    double end = MPI_Wtime();
    if (rc != MPI_SUCCESS) throw std::runtime_error("MPI_Allreduce failed");
    return (end - start) * 1e6;
  }

  int64_t CountWrong(int64_t count, bool /*in_place*/) override {
    int64_t wrong = 0;
    WithElementType(options_.dtype, [&](auto zero) {
      using T = decltype(zero);
      const T* out = reinterpret_cast<const T*>(recv_.data());
      // The pattern repeats every 65 * ranks elements (periods 5, 13, ranks).
      const int64_t period = int64_t{65} * placement_.ranks;
      std::vector<T> expected(static_cast<size_t>(std::min(period, count)));
      for (size_t i = 0; i < expected.size(); ++i) {
        expected[i] = ExpectedValue<T>(options_.op, placement_.ranks, static_cast<int64_t>(i));
      }
      for (int64_t i = 0; i < count; ++i) {
        if (out[i] != expected[static_cast<size_t>(i % period)]) ++wrong;
      }
    });
    return wrong;
  }

  std::vector<StepSample> RunSteps(const StepOptions& options, int rank, int ranks) override {
    return RunMpiSteps(options, rank, ranks);
  }

  BackendInfo Info() const override {
    BackendInfo info;
    info.device = "CPU (MPI over host memory)";
    info.bus_id = "host";
    return info;
  }

 private:
  HarnessOptions options_;
  RankPlacement placement_;
  std::vector<char> send_;
  std::vector<char> recv_;
};

}  // namespace

std::unique_ptr<AllReduceBackend> MakeMpiBackend(const HarnessOptions& options,
                                                 const RankPlacement& placement) {
  return std::make_unique<MpiBackend>(options, placement);
}

}  // namespace fabtrack::harness

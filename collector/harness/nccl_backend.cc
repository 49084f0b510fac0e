// The NCCL backend: ncclAllReduce on device buffers, one GPU per rank
// (local rank modulo the visible devices), timed with CUDA events on the
// communicator's stream: the mean from calls launched back to back with
// nothing between them, as nccl-tests, the per-call samples from a second
// loop; or one by one / as a CUDA graph (timing_plan.h). The check pattern is
// written and checked on the host and copied with cudaMemcpy, so no kernels of our own are needed.
// Step mode computes with cuBLAS GEMMs on its own stream while the communicator's stream reduces
// each gradient bucket once the compute stream has produced it.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "collector/harness/backend.h"
#include "collector/harness/check_pattern.h"
#include "collector/harness/cublas_library.h"
#include "collector/harness/mpi_steps.h"
#include "collector/harness/nccl_support.h"
#include "collector/harness/timing_plan.h"

namespace fabtrack::harness {
namespace {

// nccl_support.h's codes are nccl.h's values.
static_assert(static_cast<int>(NcclTypeCode::kInt8) == ncclInt8);
static_assert(static_cast<int>(NcclTypeCode::kUint8) == ncclUint8);
static_assert(static_cast<int>(NcclTypeCode::kInt32) == ncclInt32);
static_assert(static_cast<int>(NcclTypeCode::kUint32) == ncclUint32);
static_assert(static_cast<int>(NcclTypeCode::kInt64) == ncclInt64);
static_assert(static_cast<int>(NcclTypeCode::kUint64) == ncclUint64);
static_assert(static_cast<int>(NcclTypeCode::kFloat16) == ncclFloat16);
static_assert(static_cast<int>(NcclTypeCode::kFloat32) == ncclFloat32);
static_assert(static_cast<int>(NcclTypeCode::kFloat64) == ncclFloat64);
static_assert(static_cast<int>(NcclTypeCode::kBfloat16) == ncclBfloat16);
static_assert(static_cast<int>(NcclOpCode::kSum) == ncclSum);
static_assert(static_cast<int>(NcclOpCode::kProd) == ncclProd);
static_assert(static_cast<int>(NcclOpCode::kMax) == ncclMax);
static_assert(static_cast<int>(NcclOpCode::kMin) == ncclMin);
static_assert(static_cast<int>(NcclOpCode::kAvg) == ncclAvg);

ncclDataType_t ToNccl(DataType t) { return static_cast<ncclDataType_t>(ToNcclTypeCode(t)); }
ncclRedOp_t ToNccl(ReduceOp op) { return static_cast<ncclRedOp_t>(ToNcclOpCode(op)); }

void CheckCuda(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) {
    throw std::runtime_error(std::string("NCCL backend: ") + what + ": " + cudaGetErrorString(rc));
  }
}

void CheckNccl(ncclResult_t rc, const char* what, ncclComm_t comm) {
  if (rc != ncclSuccess) {
    std::string message = std::string("NCCL backend: ") + what + ": " + ncclGetErrorString(rc);
    const char* last = ncclGetLastError(comm);
    if (last != nullptr && *last != '\0') message += std::string(" (") + last + ")";
    throw std::runtime_error(message);
  }
}

// Host-side element conversions; half and bfloat16 go through float.
template <typename T>
T FromInt(int v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __float2half(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

template <typename T>
T Expected(ReduceOp op, int ranks, int64_t i) {
  if constexpr (std::is_same_v<T, __half>) {
    return __float2half(ExpectedValue<float>(op, ranks, i));
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16(ExpectedValue<float>(op, ranks, i));
  } else {
    return ExpectedValue<T>(op, ranks, i);
  }
}

template <typename T>
bool Matches(T got, T expected, bool tolerant) {
  if constexpr (std::is_same_v<T, __half>) {
    return ValueMatches(__half2float(got), __half2float(expected), tolerant);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return ValueMatches(__bfloat162float(got), __bfloat162float(expected), tolerant);
  } else if constexpr (std::is_integral_v<T>) {
    return got == expected;
  } else {
    return ValueMatches(static_cast<double>(got), static_cast<double>(expected), tolerant);
  }
}

std::optional<std::string> GetEnv(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

// Sends this rank's NCCL_DEBUG output to a file of its own in a private
// directory, unless the user chose NCCL_DEBUG_FILE. Must run before NCCL's
// first call: NCCL reads these variables once. Returns the file, or "".
std::string CaptureNcclDebug(int rank) {
  if (GetEnv("NCCL_DEBUG_FILE")) return "";
  std::string dir = DebugTempBase(GetEnv) + "/fabtrack-nccl-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) return "";  // no capture; NCCL logs as configured
  std::string file;
  for (const auto& [name, value] : NcclDebugSettings(GetEnv, dir, rank)) {
    setenv(name.c_str(), value.c_str(), /*overwrite=*/1);
    if (name == "NCCL_DEBUG_FILE") file = value;
  }
  return file;
}

// Device state of step mode: the gradients, a compute stream with cuBLAS and
// a 4096x4096 fp32 GEMM as the unit of compute, events per bucket.
struct StepDevice {
  static constexpr int kN = 4096;
  void* gradients = nullptr;
  float *a = nullptr, *b = nullptr, *c = nullptr;
  cudaStream_t compute = nullptr;
  const CublasLibrary* cublas = nullptr;
  cublasHandle_t blas = nullptr;
  cudaEvent_t start = nullptr, backward_end = nullptr, comm_end = nullptr;
  std::vector<cudaEvent_t> ready;

  StepDevice(size_t gradient_bytes, size_t buckets) : ready(buckets, nullptr) {
    CheckCuda(cudaMalloc(&gradients, gradient_bytes), "cudaMalloc (gradients)");
    const size_t matrix = sizeof(float) * kN * kN;
    CheckCuda(cudaMalloc(&a, matrix), "cudaMalloc");
    CheckCuda(cudaMalloc(&b, matrix), "cudaMalloc");
    CheckCuda(cudaMalloc(&c, matrix), "cudaMalloc");
    CheckCuda(cudaMemset(a, 0, matrix), "cudaMemset");
    CheckCuda(cudaMemset(b, 0, matrix), "cudaMemset");
    CheckCuda(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking), "cudaStreamCreate");
    std::string why;
    cublas = LoadCublas(&why);
    if (cublas == nullptr) throw std::runtime_error("NCCL backend: step mode: " + why);
    if (cublas->create(&blas) != CUBLAS_STATUS_SUCCESS) {
      throw std::runtime_error("NCCL backend: cublasCreate failed");
    }
    cublas->set_stream(blas, compute);
    for (cudaEvent_t* e : {&start, &backward_end, &comm_end}) {
      CheckCuda(cudaEventCreate(e), "cudaEventCreate");
    }
    for (cudaEvent_t& e : ready) {
      CheckCuda(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
    }
  }
  ~StepDevice() {
    for (cudaEvent_t e : ready) {
      if (e != nullptr) cudaEventDestroy(e);
    }
    for (cudaEvent_t e : {start, backward_end, comm_end}) {
      if (e != nullptr) cudaEventDestroy(e);
    }
    if (blas != nullptr) cublas->destroy(blas);
    if (compute != nullptr) cudaStreamDestroy(compute);
    for (void* p :
         {static_cast<void*>(a), static_cast<void*>(b), static_cast<void*>(c), gradients}) {
      if (p != nullptr) cudaFree(p);
    }
  }
  StepDevice(const StepDevice&) = delete;
  StepDevice& operator=(const StepDevice&) = delete;

  void Gemm() {
    const float one = 1.0f, zero = 0.0f;
    if (cublas->sgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, kN, kN, kN, &one, a, kN, b, kN, &zero, c,
                      kN) != CUBLAS_STATUS_SUCCESS) {
      throw std::runtime_error("NCCL backend: cublasSgemm failed");
    }
  }

  // Milliseconds per GEMM on this GPU, from a timed batch after a warmup.
  double CalibrateGemmMs() {
    for (int i = 0; i < 3; ++i) Gemm();
    CheckCuda(cudaEventRecord(start, compute), "cudaEventRecord");
    constexpr int kBatch = 20;
    for (int i = 0; i < kBatch; ++i) Gemm();
    CheckCuda(cudaEventRecord(backward_end, compute), "cudaEventRecord");
    CheckCuda(cudaEventSynchronize(backward_end), "cudaEventSynchronize");
    float ms = 0;
    CheckCuda(cudaEventElapsedTime(&ms, start, backward_end), "cudaEventElapsedTime");
    return std::max(1e-3, static_cast<double>(ms) / kBatch);
  }
};

class NcclBackend : public AllReduceBackend {
 public:
  NcclBackend(const HarnessOptions& options, const RankPlacement& placement)
      : options_(options), placement_(placement) {}

  ~NcclBackend() override {
    // ncclCommDestroy finalizes first (flushing pending work); after an error
    // ncclCommAbort does not wait for operations that may never complete.
    if (comm_ != nullptr) (failed_ ? ncclCommAbort : ncclCommDestroy)(comm_);
    if (send_ != nullptr) cudaFree(send_);
    if (recv_ != nullptr) cudaFree(recv_);
    if (pinned_) cudaFreeHost(host_);
    if (start_ != nullptr) cudaEventDestroy(start_);
    if (stop_ != nullptr) cudaEventDestroy(stop_);
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
    // After a failure the NCCL log stays for diagnosis (errors name it).
    if (!debug_file_.empty() && !failed_) {
      unlink(debug_file_.c_str());
      rmdir(debug_file_.substr(0, debug_file_.rfind('/')).c_str());
    }
  }

  const char* name() const override { return "nccl"; }

  // Local set-up: device, stream, events, facts. Throws on CUDA errors.
  void SetUpDevice() {
    int devices = 0;
    CheckCuda(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
    if (devices <= 0) throw std::runtime_error("NCCL backend: no CUDA device visible");
    device_ = placement_.local_rank % devices;
    CheckCuda(cudaSetDevice(device_), "cudaSetDevice");
    CheckCuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    CheckCuda(cudaEventCreate(&start_), "cudaEventCreate");
    CheckCuda(cudaEventCreate(&stop_), "cudaEventCreate");

    cudaDeviceProp prop{};
    CheckCuda(cudaGetDeviceProperties(&prop, device_), "cudaGetDeviceProperties");
    info_.device = prop.name;
    info_.bus_id = FormatBusId(prop.pciDomainID, prop.pciBusID, prop.pciDeviceID);
    info_.device_index = device_;
    int version = 0;
    CheckCuda(cudaRuntimeGetVersion(&version), "cudaRuntimeGetVersion");
    info_.cuda_version = FormatCudaVersion(version);
    CheckCuda(cudaDriverGetVersion(&version), "cudaDriverGetVersion");
    info_.driver_version = FormatCudaVersion(version);
  }

  void set_debug_file(std::string path) { debug_file_ = std::move(path); }

  // Collective over MPI_COMM_WORLD.
  void InitComm(const ncclUniqueId& id) {
    Guard([&] {
      CheckNccl(ncclCommInitRank(&comm_, placement_.ranks, id, placement_.rank), "ncclCommInitRank",
                nullptr);
      int code = 0;
      CheckNccl(ncclGetVersion(&code), "ncclGetVersion", comm_);
      info_.nccl_version = FormatNcclVersion(code);
    });
  }

  void Prepare(int64_t max_bytes) override {
    const size_t bytes = static_cast<size_t>(std::max<int64_t>(max_bytes, 8));
    Guard([&] {
      CheckCuda(cudaMalloc(&send_, bytes), "cudaMalloc (send buffer)");
      CheckCuda(cudaMalloc(&recv_, bytes), "cudaMalloc (receive buffer)");
      if (cudaMallocHost(&host_, bytes) == cudaSuccess) {
        pinned_ = true;
      } else {
        cudaGetLastError();  // clear it; plain memory only makes the copies slower
        plain_.assign(bytes, 0);
        host_ = plain_.data();
      }
    });
  }

  void FillInputs(int64_t count, bool in_place) override {
    Guard([&] {
      WithElementType<__half, __nv_bfloat16>(options_.dtype, [&](auto zero) {
        using T = decltype(zero);
        std::vector<T> block = Period<T>(count, [&](int64_t i) {
          return FromInt<T>(PatternValue(options_.op, placement_.rank, placement_.ranks, i));
        });
        // One period, then doubling copies of the filled prefix (a whole
        // number of periods, so the pattern continues).
        T* host = static_cast<T*>(host_);
        std::memcpy(host, block.data(), block.size() * sizeof(T));
        for (int64_t filled = static_cast<int64_t>(block.size()); filled < count;) {
          const int64_t n = std::min(filled, count - filled);
          std::memcpy(host + filled, host, static_cast<size_t>(n) * sizeof(T));
          filled += n;
        }
        const size_t bytes = static_cast<size_t>(count) * sizeof(T);
        void* in = in_place ? recv_ : send_;
        CheckCuda(cudaMemcpyAsync(in, host_, bytes, cudaMemcpyHostToDevice, stream_),
                  "cudaMemcpy (inputs)");
        if (!in_place) CheckCuda(cudaMemsetAsync(recv_, 0, bytes, stream_), "cudaMemset");
        CheckCuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
      });
    });
  }

  // One call timed on its own (launch and completion): the check's call.
  double RunOnce(int64_t count, bool in_place) override {
    float ms = 0;
    Guard([&] {
      CheckCuda(cudaEventRecord(start_, stream_), "cudaEventRecord");
      Enqueue(count, in_place);
      CheckCuda(cudaEventRecord(stop_, stream_), "cudaEventRecord");
      WaitFor(stop_);
      CheckCuda(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    });
    return static_cast<double>(ms) * 1e3;
  }

  // As nccl-tests: the warmup calls back to back, then one wait.
  void Warmup(int64_t count, bool in_place, int iters) override {
    Guard([&] {
      for (int i = 0; i < iters; ++i) Enqueue(count, in_place);
      WaitForStream();
    });
  }

  // Carries out timing_plan.h's plan on the communicator's stream: the mean
  // loop, then the sample loop.
  TimedRun RunTimed(int64_t count, bool in_place, int iters) override {
    TimedRun run;
    Guard([&] {
      const TimingOptions& timing = options_.timing;
      EnsureEvents(EventPoolSize(timing, iters));
      GraphExec graph;
      if (timing.graph_launches > 0) graph.exec = Capture(count, in_place, iters);
      if (std::optional<TimedChunk> mean = PlanMeanLoop(timing, iters)) {
        run.mean_us = RunChunk(*mean, count, in_place, graph.exec).at(0);
      }
      for (int c = 0; c < SampleChunkCount(timing, iters); ++c) {
        std::vector<double> times =
            RunChunk(PlanSampleChunk(timing, iters, c), count, in_place, graph.exec);
        run.samples_us.insert(run.samples_us.end(), times.begin(), times.end());
      }
      if (run.samples_us.empty() && run.mean_us) run.samples_us = {*run.mean_us};  // -I 0
    });
    return run;
  }

  int64_t CountWrong(int64_t count, bool /*in_place*/) override {
    int64_t wrong = 0;
    Guard([&] {
      WithElementType<__half, __nv_bfloat16>(options_.dtype, [&](auto zero) {
        using T = decltype(zero);
        const size_t bytes = static_cast<size_t>(count) * sizeof(T);
        CheckCuda(cudaMemcpyAsync(host_, recv_, bytes, cudaMemcpyDeviceToHost, stream_),
                  "cudaMemcpy (results)");
        CheckCuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
        std::vector<T> expected = Period<T>(
            count, [&](int64_t i) { return Expected<T>(options_.op, placement_.ranks, i); });
        const bool tolerant = NeedsTolerance(options_.dtype, options_.op);
        const int64_t period = static_cast<int64_t>(expected.size());
        const T* out = static_cast<const T*>(host_);
        for (int64_t base = 0; base < count; base += period) {
          const int64_t n = std::min(period, count - base);
          for (int64_t j = 0; j < n; ++j) {
            if (!Matches(out[base + j], expected[static_cast<size_t>(j)], tolerant)) ++wrong;
          }
        }
      });
    });
    return wrong;
  }

  BackendInfo Info() const override { return info_; }

  // Step mode on the GPU: the backward pass is real GEMM work on a compute
  // stream, calibrated to the requested milliseconds; each bucket's
  // ncclAllReduce waits (cudaStreamWaitEvent) for the compute that produced
  // it and runs on the communicator's stream, overlapping the rest of the
  // backward pass as DDP's does. Times come from CUDA events.
  std::vector<StepSample> RunSteps(const StepOptions& o, int rank, int ranks) override {
    std::vector<double> mine;
    Guard([&] {
      const std::vector<Bucket> buckets = PlanBuckets(o);
      const int64_t grad_bytes = o.model_params * GradientElementSize(o.grad_dtype);
      const ncclDataType_t type = o.grad_dtype == "fp32"   ? ncclFloat32
                                  : o.grad_dtype == "bf16" ? ncclBfloat16
                                                           : ncclFloat16;
      const int width = GradientElementSize(o.grad_dtype);
      StepDevice d(static_cast<size_t>(grad_bytes), buckets.size());
      CheckCuda(cudaMemset(d.gradients, 0, static_cast<size_t>(grad_bytes)), "cudaMemset");
      const double gemm_ms = d.CalibrateGemmMs();
      auto launch_compute = [&](double ms) {
        for (int64_t g = std::llround(ms / gemm_ms); g > 0; --g) d.Gemm();
      };
      for (int s = -o.warmup_steps; s < o.steps; ++s) {
        MPI_Barrier(MPI_COMM_WORLD);
        CheckCuda(cudaEventRecord(d.start, d.compute), "cudaEventRecord");
        launch_compute(o.forward_ms);
        double produced_ms = 0;
        int64_t offset = 0;
        for (size_t b = 0; b < buckets.size(); ++b) {
          launch_compute(buckets[b].ready_ms - produced_ms);
          produced_ms = buckets[b].ready_ms;
          CheckCuda(cudaEventRecord(d.ready[b], d.compute), "cudaEventRecord");
          CheckCuda(cudaStreamWaitEvent(stream_, d.ready[b], 0), "cudaStreamWaitEvent");
          char* at = static_cast<char*>(d.gradients) + offset;
          CheckNccl(ncclAllReduce(at, at, static_cast<size_t>(buckets[b].bytes / width), type,
                                  ncclSum, comm_, stream_),
                    "ncclAllReduce", comm_);
          offset += buckets[b].bytes;
        }
        CheckCuda(cudaEventRecord(d.backward_end, d.compute), "cudaEventRecord");
        CheckCuda(cudaEventRecord(d.comm_end, stream_), "cudaEventRecord");
        CheckCuda(cudaEventSynchronize(d.backward_end), "cudaEventSynchronize");
        CheckCuda(cudaEventSynchronize(d.comm_end), "cudaEventSynchronize");
        float compute_ms = 0, comm_ms = 0;
        CheckCuda(cudaEventElapsedTime(&compute_ms, d.start, d.backward_end),
                  "cudaEventElapsedTime");
        CheckCuda(cudaEventElapsedTime(&comm_ms, d.start, d.comm_end), "cudaEventElapsedTime");
        if (s < 0) continue;
        const double step_ms = std::max(compute_ms, comm_ms);
        mine.insert(mine.end(), {step_ms, static_cast<double>(compute_ms), step_ms - compute_ms});
      }
    });
    return SlowestPerStep(mine, o.steps, rank, ranks);
  }

  std::string DebugLog() override {
    if (debug_file_.empty()) return "";
    std::ifstream in(debug_file_, std::ios::binary);
    std::ostringstream content;
    content << in.rdbuf();
    return content.str();
  }

 private:
  // One period of the pattern (it repeats every 65 * ranks elements: periods
  // 5, 13 and ranks), or `count` elements when fewer.
  template <typename T, typename G>
  std::vector<T> Period(int64_t count, G value) const {
    const int64_t period = std::min<int64_t>(int64_t{65} * placement_.ranks, count);
    std::vector<T> block(static_cast<size_t>(std::max<int64_t>(period, 1)));
    for (size_t i = 0; i < block.size(); ++i) block[i] = value(static_cast<int64_t>(i));
    return block;
  }

  // Puts one chunk's steps on the stream and reads its samples.
  std::vector<double> RunChunk(const TimedChunk& chunk, int64_t count, bool in_place,
                               cudaGraphExec_t graph) {
    for (const StreamStep& step : chunk.steps) {
      switch (step.kind) {
        case StreamStep::Kind::kRecordEvent:
          CheckCuda(cudaEventRecord(events_[static_cast<size_t>(step.index)], stream_),
                    "cudaEventRecord");
          break;
        case StreamStep::Kind::kCollective:
          Enqueue(count, in_place);
          break;
        case StreamStep::Kind::kGraphLaunch:
          CheckCuda(cudaGraphLaunch(graph, stream_), "cudaGraphLaunch");
          break;
        case StreamStep::Kind::kWaitForStream:
          WaitForStream();
          break;
      }
    }
    // Times from one origin, so the deltas telescope: their mean is exactly
    // (last - first) / calls.
    std::vector<double> event_ms(static_cast<size_t>(chunk.events), 0.0);
    for (int e = 1; e < chunk.events; ++e) {
      float ms = 0;
      CheckCuda(cudaEventElapsedTime(&ms, events_[0], events_[static_cast<size_t>(e)]),
                "cudaEventElapsedTime");
      event_ms[static_cast<size_t>(e)] = ms;
    }
    return IntervalTimesUs(chunk, event_ms);
  }

  void Enqueue(int64_t count, bool in_place) {
    CheckNccl(ncclAllReduce(in_place ? recv_ : send_, recv_, static_cast<size_t>(count),
                            ToNccl(options_.dtype), ToNccl(options_.op), comm_, stream_),
              "ncclAllReduce", comm_);
  }

  void WaitForStream() {
    CheckCuda(cudaEventRecord(stop_, stream_), "cudaEventRecord");
    WaitFor(stop_);
  }

  void EnsureEvents(int count) {
    while (static_cast<int>(events_.size()) < count) {
      cudaEvent_t e = nullptr;
      CheckCuda(cudaEventCreate(&e), "cudaEventCreate");
      events_.push_back(e);
    }
  }

  struct GraphExec {
    cudaGraphExec_t exec = nullptr;
    GraphExec() = default;
    GraphExec(const GraphExec&) = delete;
    GraphExec& operator=(const GraphExec&) = delete;
    ~GraphExec() {
      if (exec != nullptr) cudaGraphExecDestroy(exec);
    }
  };

  // `iters` calls captured into one graph, as nccl-tests -G (thread-local
  // capture mode, as it uses). A failed capture is ended before the throw,
  // so the stream is usable for the error path.
  cudaGraphExec_t Capture(int64_t count, bool in_place, int iters) {
    CheckCuda(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal),
              "cudaStreamBeginCapture");
    cudaGraph_t graph = nullptr;
    try {
      for (const StreamStep& step : GraphCapture(options_.timing, iters)) {
        if (step.kind == StreamStep::Kind::kCollective) Enqueue(count, in_place);
      }
    } catch (...) {
      cudaStreamEndCapture(stream_, &graph);
      if (graph != nullptr) cudaGraphDestroy(graph);
      throw;
    }
    CheckCuda(cudaStreamEndCapture(stream_, &graph), "cudaStreamEndCapture");
    cudaGraphExec_t exec = nullptr;
    cudaError_t rc = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    CheckCuda(rc, "cudaGraphInstantiate");
    return exec;
  }

  // Waits for `event`, watching the communicator: a peer that failed or
  // vanished shows as an asynchronous NCCL error instead of a hang.
  void WaitFor(cudaEvent_t event) {
    for (;;) {
      cudaError_t rc = cudaEventQuery(event);
      if (rc == cudaSuccess) return;
      if (rc != cudaErrorNotReady) CheckCuda(rc, "cudaEventQuery");
      ncclResult_t async = ncclSuccess;
      CheckNccl(ncclCommGetAsyncError(comm_, &async), "ncclCommGetAsyncError", comm_);
      CheckNccl(async, "ncclAllReduce (asynchronous error)", comm_);
    }
  }

  // Runs f; after an error the communicator is aborted, not finalized, and
  // the message names this rank's NCCL log, which is kept.
  template <typename F>
  void Guard(F f) {
    try {
      f();
    } catch (const std::exception& e) {
      failed_ = true;
      if (debug_file_.empty()) throw;
      throw std::runtime_error(std::string(e.what()) + " (NCCL log: " + debug_file_ + ")");
    }
  }

  HarnessOptions options_;
  RankPlacement placement_;
  BackendInfo info_;
  int device_ = -1;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  std::vector<cudaEvent_t> events_;  // the timed loop's pool (timing_plan.h)
  void* send_ = nullptr;
  void* recv_ = nullptr;
  void* host_ = nullptr;
  bool pinned_ = false;
  std::vector<char> plain_;
  bool failed_ = false;
  std::string debug_file_;
};

// Whether every rank reported ok; collective.
bool AllOk(bool ok) {
  int flag = ok ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &flag, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return flag == 1;
}

}  // namespace

bool NcclBackendCompiled() { return true; }

// Collective: every rank calls it, and every rank gets nullptr if any rank
// fails before ncclCommInitRank (so no rank waits there for a peer that never
// comes).
std::unique_ptr<AllReduceBackend> MakeNcclBackend(const HarnessOptions& options,
                                                  const RankPlacement& placement,
                                                  std::string* why) {
  auto backend = std::make_unique<NcclBackend>(options, placement);
  backend->set_debug_file(CaptureNcclDebug(placement.rank));
  std::string error;
  try {
    backend->SetUpDevice();
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (!AllOk(error.empty())) {
    *why = error.empty() ? "NCCL backend: another rank could not set up its GPU" : error;
    return nullptr;
  }

  // Rank 0 makes the unique id; the broadcast also says whether it could.
  struct {
    int ok;
    ncclUniqueId id;
  } root{};
  if (placement.rank == 0) {
    ncclResult_t rc = ncclGetUniqueId(&root.id);
    root.ok = rc == ncclSuccess;
    if (!root.ok) error = std::string("NCCL backend: ncclGetUniqueId: ") + ncclGetErrorString(rc);
  }
  MPI_Bcast(&root, sizeof root, MPI_BYTE, 0, MPI_COMM_WORLD);
  if (!root.ok) {
    *why = error.empty() ? "NCCL backend: rank 0 could not create the NCCL unique id" : error;
    return nullptr;
  }
  try {
    backend->InitComm(root.id);
  } catch (const std::exception& e) {
    *why = e.what();
    return nullptr;
  }
  return backend;
}

}  // namespace fabtrack::harness

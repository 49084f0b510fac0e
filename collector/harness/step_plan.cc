#include "collector/harness/step_plan.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

#include "core/statistics.h"

namespace fabtrack::harness {

std::optional<int64_t> ParseParameterCount(const std::string& text) {
  if (text.empty() || text.size() > 32) return std::nullopt;
  std::string digits = text;
  double scale = 1;
  switch (std::toupper(static_cast<unsigned char>(digits.back()))) {
    case 'K':
      scale = 1e3;
      break;
    case 'M':
      scale = 1e6;
      break;
    case 'B':
      scale = 1e9;
      break;
    case 'T':
      scale = 1e12;
      break;
    default:
      break;
  }
  if (scale != 1) digits.pop_back();
  double value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  double params = std::round(value * scale);
  if (!(params >= 1) || params > 1e15) return std::nullopt;
  return static_cast<int64_t>(params);
}

int GradientElementSize(const std::string& dtype) {
  if (dtype == "fp32") return 4;
  if (dtype == "bf16" || dtype == "fp16") return 2;
  return 0;
}

std::vector<Bucket> PlanBuckets(const StepOptions& o) {
  std::vector<Bucket> buckets;
  const int width = GradientElementSize(o.grad_dtype);
  if (width == 0 || o.model_params <= 0 || o.bucket_bytes < width) return buckets;
  const int64_t total = o.model_params * width;
  const int64_t per_bucket = o.bucket_bytes / width * width;
  for (int64_t done = 0; done < total;) {
    const int64_t bytes = std::min(per_bucket, total - done);
    done += bytes;
    buckets.push_back(
        {bytes, o.backward_ms * static_cast<double>(done) / static_cast<double>(total)});
  }
  return buckets;
}

std::string ValidateStep(const StepOptions& o) {
  if (o.model_params <= 0) return "--model-params: required in step mode (e.g. 7B, 350M)";
  if (GradientElementSize(o.grad_dtype) == 0) {
    return "--grad-dtype " + o.grad_dtype + ": expected fp32, bf16 or fp16";
  }
  if (o.bucket_bytes < 1024 || o.bucket_bytes > (int64_t{1} << 30)) {
    return "--bucket: 1K to 1G";
  }
  if (!(o.backward_ms > 0) || o.backward_ms > 600000) {
    return "--backward-ms: required in step mode, above 0 and at most 600000";
  }
  if (!(o.forward_ms >= 0) || o.forward_ms > 600000) return "--forward-ms: 0 to 600000";
  if (o.steps < 1 || o.steps > 100000) return "--steps: 1 to 100000";
  if (o.warmup_steps < 0 || o.warmup_steps > 10000) return "--warmup-steps: 0 to 10000";
  if (o.max_buckets_in_flight < 1 || o.max_buckets_in_flight > 4096) {
    return "--max-buckets-in-flight: 1 to 4096";
  }
  const int64_t grad_bytes = o.model_params * GradientElementSize(o.grad_dtype);
  if (grad_bytes / o.bucket_bytes > 10'000'000) return "--bucket: more than 10 million buckets";
  return "";
}

StepSummary SummarizeSteps(const StepOptions& o, const std::vector<StepSample>& samples) {
  StepSummary s;
  s.model_params = o.model_params;
  s.grad_dtype = o.grad_dtype;
  s.grad_bytes = o.model_params * GradientElementSize(o.grad_dtype);
  s.bucket_bytes = o.bucket_bytes;
  s.buckets = static_cast<int>(PlanBuckets(o).size());
  s.forward_ms = o.forward_ms;
  s.backward_ms = o.backward_ms;
  s.steps = static_cast<int>(samples.size());
  std::vector<double> step, compute, exposed, idle;
  for (const StepSample& x : samples) {
    step.push_back(x.step_ms);
    compute.push_back(x.compute_ms);
    exposed.push_back(x.exposed_ms);
    idle.push_back(x.step_ms > 0 ? x.exposed_ms / x.step_ms : 0);
  }
  s.step_ms_p50 = stats::Quantile(step, 0.5).value_or(0);
  s.step_ms_p90 = stats::Quantile(step, 0.9).value_or(0);
  s.step_ms_p99 = stats::Quantile(step, 0.99).value_or(0);
  s.step_ms_max = step.empty() ? 0 : *std::max_element(step.begin(), step.end());
  s.step_ms_mean = stats::Mean(step);
  s.compute_ms_p50 = stats::Quantile(compute, 0.5).value_or(0);
  s.exposed_ms_p50 = stats::Quantile(exposed, 0.5).value_or(0);
  s.exposed_ms_p99 = stats::Quantile(exposed, 0.99).value_or(0);
  s.exposed_ms_mean = stats::Mean(exposed);
  s.idle_share_p50 = stats::Quantile(idle, 0.5).value_or(0);
  s.idle_share_mean = stats::Mean(idle);
  return s;
}

}  // namespace fabtrack::harness

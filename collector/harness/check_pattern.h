// The values every rank contributes and the exact result expected, so a
// wrong all-reduce is counted element by element (nccl-tests' #wrong).
// Values are small integers: exact in every type, so comparisons are exact.
#pragma once

#include <cstdint>
#include <type_traits>

#include "collector/harness/harness_options.h"

namespace fabtrack::harness {

// Input of `rank` at element `i`.
inline int PatternValue(ReduceOp op, int rank, int ranks, int64_t i) {
  switch (op) {
    case ReduceOp::kProd:
      // Products overflow fast: all ones but one rank's 2.
      return rank == static_cast<int>(i % ranks) ? 2 : 1;
    case ReduceOp::kMax:
    case ReduceOp::kMin:
      return static_cast<int>((rank * 7 + i) % 13);
    case ReduceOp::kSum:
    case ReduceOp::kAvg:
      return static_cast<int>((rank + i) % 5);
  }
  return 0;
}

// Expected output at element i, computed in T with the same wrap-around the
// reduction has (unsigned arithmetic for integers).
template <typename T, bool = std::is_integral_v<T>>
struct Accumulator {
  using type = T;
};
template <typename T>
struct Accumulator<T, true> {
  using type = std::make_unsigned_t<T>;
};

template <typename T>
T ExpectedValue(ReduceOp op, int ranks, int64_t i) {
  using Acc = typename Accumulator<T>::type;
  Acc acc = static_cast<Acc>(PatternValue(op, 0, ranks, i));
  for (int r = 1; r < ranks; ++r) {
    Acc v = static_cast<Acc>(PatternValue(op, r, ranks, i));
    switch (op) {
      case ReduceOp::kSum:
      case ReduceOp::kAvg:
        acc = static_cast<Acc>(acc + v);
        break;
      case ReduceOp::kProd:
        acc = static_cast<Acc>(acc * v);
        break;
      case ReduceOp::kMax:
        if (static_cast<T>(v) > static_cast<T>(acc)) acc = v;
        break;
      case ReduceOp::kMin:
        if (static_cast<T>(v) < static_cast<T>(acc)) acc = v;
        break;
    }
  }
  T result = static_cast<T>(acc);
  if (op == ReduceOp::kAvg) result = static_cast<T>(result / static_cast<T>(ranks));
  return result;
}

}  // namespace fabtrack::harness

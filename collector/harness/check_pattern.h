// The values every rank contributes and the exact result expected, so a
// wrong all-reduce is counted element by element (nccl-tests' #wrong).
// Values are small integers: exact in every type, so comparisons are exact.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
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

// Marks a 16-bit float type a backend has no host representation for.
struct NoHostType {};

// Calls f with a value of the host element type of `t`. Backends that handle
// half/bfloat16 name their host types; for the others those types throw.
template <typename Half = NoHostType, typename Bfloat16 = NoHostType, typename F>
void WithElementType(DataType t, F f) {
  switch (t) {
    case DataType::kInt8:
      return f(int8_t{});
    case DataType::kUint8:
      return f(uint8_t{});
    case DataType::kInt32:
      return f(int32_t{});
    case DataType::kUint32:
      return f(uint32_t{});
    case DataType::kInt64:
      return f(int64_t{});
    case DataType::kUint64:
      return f(uint64_t{});
    case DataType::kFloat:
      return f(float{});
    case DataType::kDouble:
      return f(double{});
    case DataType::kHalf:
      if constexpr (!std::is_same_v<Half, NoHostType>) return f(Half{});
      break;
    case DataType::kBfloat16:
      if constexpr (!std::is_same_v<Bfloat16, NoHostType>) return f(Bfloat16{});
      break;
  }
  throw std::invalid_argument(std::string("no host type for ") + DataTypeName(t));
}

}  // namespace fabtrack::harness

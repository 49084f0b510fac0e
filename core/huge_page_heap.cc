#include "core/huge_page_heap.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#if defined(__linux__) && defined(__GLIBC__)
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace fabtrack {

bool UseHugePagesForHeap(std::size_t bytes) {
#if defined(__linux__) && defined(__GLIBC__) && defined(MADV_HUGEPAGE)
  constexpr std::size_t kHugePage = std::size_t{2} << 20;
  // glibc's largest mmap threshold on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX).
  constexpr int kMmapThreshold = 32 << 20;
  // A block larger than what the heap's top has left grows the heap by the
  // block and M_TOP_PAD: one brk, `bytes` of untouched address space.
  constexpr std::size_t kProbe = std::size_t{1} << 20;
  constexpr int kDefaultTopPad = 128 * 1024;  // glibc's DEFAULT_TOP_PAD
  if (bytes < 4 * kHugePage || bytes > (std::size_t{1} << 40)) return false;
  if (!mallopt(M_MMAP_THRESHOLD, kMmapThreshold) ||
      !mallopt(M_TRIM_THRESHOLD, static_cast<int>(std::min<std::size_t>(2 * bytes, 1u << 30))) ||
      !mallopt(M_TOP_PAD, static_cast<int>(std::min<std::size_t>(bytes, 1u << 30)))) {
    return false;
  }
  void* probe = std::malloc(kProbe);
  if (!probe) return false;
  const auto begin = reinterpret_cast<std::uintptr_t>(probe);
  const auto end = reinterpret_cast<std::uintptr_t>(sbrk(0));
  bool marked = false;
  // The probe must have come from the brk heap, followed by the padding.
  if (end > begin && end - begin >= bytes / 2) {
    const std::uintptr_t first = (begin + kHugePage - 1) & ~(kHugePage - 1);
    const std::uintptr_t last = end & ~(kHugePage - 1);
    marked =
        last > first && madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE) == 0;
  }
  std::free(probe);
  // Not grown as asked (the heap could not extend there, or the system
  // commits address space strictly): later growth asks for the usual padding
  // again, not for `bytes` each time.
  if (!marked) mallopt(M_TOP_PAD, kDefaultTopPad);
  return marked;
#else
  (void)bytes;
  return false;
#endif
}

}  // namespace fabtrack

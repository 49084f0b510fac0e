// core/huge_page_heap: the heap range is marked for huge pages (the kernel
// says so in /proc/self/smaps), and memory from it is ordinary memory.
#include "core/huge_page_heap.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

namespace fabtrack {
namespace {

// Whether the mapping holding `address` has the "hg" (MADV_HUGEPAGE) flag.
bool MarkedHuge(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= at && at < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line.find(" hg") != std::string::npos;
    }
  }
  return false;
}

TEST(HugePageHeapTest, MarksTheHeapAndItsMemoryWorks) {
#if defined(__linux__) && defined(__GLIBC__)
  // A kernel built without transparent huge pages refuses MADV_HUGEPAGE.
  if (!std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled")) {
    EXPECT_FALSE(UseHugePagesForHeap(std::size_t{256} << 20));
    GTEST_SKIP() << "no transparent huge pages in this kernel";
  }
  ASSERT_TRUE(UseHugePagesForHeap(std::size_t{256} << 20));
  // Blocks from small to large, written and read back: the heap is ordinary
  // memory. The range marked starts at the first 2 MiB boundary past where
  // the heap grew (so up to 2 MiB of a block there may lie before it): the
  // middles of the blocks of 4 MiB and more lie in it.
  std::vector<std::vector<std::uint8_t>> blocks;
  int marked = 0;
  for (std::size_t size = 64; size <= (std::size_t{16} << 20); size *= 4) {
    blocks.emplace_back(size);
    std::iota(blocks.back().begin(), blocks.back().end(), static_cast<std::uint8_t>(size));
    if (size >= (std::size_t{4} << 20)) marked += MarkedHuge(blocks.back().data() + size / 2);
  }
  for (std::size_t i = 0, size = 64; i < blocks.size(); ++i, size *= 4) {
    ASSERT_EQ(blocks[i].size(), size);
    for (std::size_t k = 0; k < size; k += 4093) {
      ASSERT_EQ(blocks[i][k], static_cast<std::uint8_t>(size + k));
    }
  }
  EXPECT_EQ(marked, 2) << "the large blocks should come from the marked heap";
#else
  EXPECT_FALSE(UseHugePagesForHeap(std::size_t{256} << 20));
#endif
}

TEST(HugePageHeapTest, TooSmallAReservationIsRefused) { EXPECT_FALSE(UseHugePagesForHeap(4096)); }

}  // namespace
}  // namespace fabtrack

// Transparent huge pages for the heap of a short process that fills it once
// (`fabtrack analyze`: ~100 MB of rows, views and figures read in a second).
//
// Why: every 4 KiB page the heap touches for the first time is a page fault,
// and on a virtual machine a fault costs several microseconds. Three years of
// a 4096-node cluster's newest night faulted ~20,000 times, a quarter of the
// client's CPU (perf: exc_page_fault under malloc, the rows' vectors, libpq's
// result blocks). With the heap in 2 MiB pages it faults ~5,000 times and the
// client's CPU falls by a quarter: what glibc's own
// GLIBC_TUNABLES=glibc.malloc.hugetlb=1 does, which only an environment set
// before the process starts can ask for.
//
// How: the heap is grown once by `bytes` of address space (M_TOP_PAD; nothing
// is touched, so nothing is resident), that range is marked MADV_HUGEPAGE,
// and glibc is told to keep it (M_TRIM_THRESHOLD) and to serve every block
// below 32 MiB from it (M_MMAP_THRESHOLD at its largest, so that the large
// vectors land in it too). Where the kernel has transparent huge pages off, or
// the heap cannot grow there, this changes nothing but the thresholds: the
// result is only faster or the same, never different.
#pragma once

#include <cstddef>

namespace fabtrack {

// Returns whether the range was marked (false: not glibc on Linux, or the
// heap did not grow as asked). Call once, early, from a single thread.
bool UseHugePagesForHeap(std::size_t bytes);

}  // namespace fabtrack

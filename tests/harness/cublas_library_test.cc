// Step mode's cuBLAS is loaded on first use, not linked (cublas_library.h):
// the loader finds the library this build was made against and every entry
// point step mode calls, and the harness program does not load it at start.
// Needs the CUDA toolkit's files only, no GPU.
#include "collector/harness/cublas_library.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace fabtrack::harness {
namespace {

TEST(CublasLibrary, EveryEntryPointStepModeCallsIsResolved) {
  std::string why;
  const CublasLibrary* cublas = LoadCublas(&why);
  ASSERT_NE(cublas, nullptr) << why;
  EXPECT_NE(cublas->create, nullptr);
  EXPECT_NE(cublas->set_stream, nullptr);
  EXPECT_NE(cublas->sgemm, nullptr);
  EXPECT_NE(cublas->destroy, nullptr);
  EXPECT_EQ(LoadCublas(&why), cublas);  // loaded once
}

// The ELF file's DT_NEEDED names, as readelf prints them.
std::string NeededLibraries(const std::string& binary) {
  std::string out;
  FILE* pipe = popen(("readelf -d '" + binary + "'").c_str(), "r");
  if (pipe == nullptr) return out;
  char line[512];
  while (fgets(line, sizeof line, pipe) != nullptr) {
    if (std::string(line).find("(NEEDED)") != std::string::npos) out += line;
  }
  pclose(pipe);
  return out;
}

// Linking libcublas made every rank of every sweep load libcublasLt (540 MB)
// before main: ~0.5 CPU-s each, for a library only step mode on a GPU uses.
TEST(CublasLibrary, TheHarnessDoesNotLoadItAtStart) {
  const std::string needed = NeededLibraries(FABTRACK_ALLREDUCE);
  ASSERT_NE(needed.find("libnccl"), std::string::npos) << needed;  // the NCCL backend is in
  EXPECT_EQ(needed.find("libcublas"), std::string::npos) << needed;
}

}  // namespace
}  // namespace fabtrack::harness

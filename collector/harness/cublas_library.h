// cuBLAS, loaded when step mode first needs it rather than linked: every
// process that links libcublas pays for loading libcublasLt (540 MB) at
// start-up, ~0.5 CPU-s on a 2-core VM, though only the NCCL backend's step
// mode ever calls it (BENCHMARKS.md, "CI time"). Built only with CUDA.
#pragma once

#include <cublas_v2.h>

#include <string>

namespace fabtrack::harness {

// The four cuBLAS entry points step mode uses, resolved from the library.
struct CublasLibrary {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSgemm_v2) sgemm = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
};

// The process's cuBLAS (loaded once; later calls return the same), or
// nullptr with *error saying which library or symbol was missing.
const CublasLibrary* LoadCublas(std::string* error);

// The file names tried, in order: the soname of the cuBLAS this was built
// against, then the same name beside the CUDA runtime in use (a toolkit
// outside the loader's path, found through the executable's RUNPATH).
std::string CublasSoname();

}  // namespace fabtrack::harness

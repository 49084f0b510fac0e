#include "collector/harness/cublas_library.h"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <mutex>

namespace fabtrack::harness {
namespace {

// The directory of the loaded libcudart, or "" when it cannot be told.
std::string CudaRuntimeDirectory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cudaGetDeviceCount), &info) == 0 ||
      info.dli_fname == nullptr) {
    return "";
  }
  std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

template <typename Function>
bool Resolve(void* library, const char* name, Function* out, std::string* error) {
  *out = reinterpret_cast<Function>(dlsym(library, name));
  if (*out == nullptr) *error = std::string("cuBLAS: no symbol ") + name + " in " + CublasSoname();
  return *out != nullptr;
}

}  // namespace

std::string CublasSoname() { return "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR); }

const CublasLibrary* LoadCublas(std::string* error) {
  static std::once_flag once;
  static CublasLibrary library;
  static std::string load_error;
  static bool loaded = false;
  std::call_once(once, [] {
    void* handle = dlopen(CublasSoname().c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      load_error = dlerror();
      const std::string beside_runtime = CudaRuntimeDirectory();
      if (!beside_runtime.empty()) {
        handle = dlopen((beside_runtime + "/" + CublasSoname()).c_str(), RTLD_NOW | RTLD_LOCAL);
      }
    }
    if (handle == nullptr) {
      load_error = "cannot load cuBLAS (" + load_error + ")";
      return;
    }
    loaded = Resolve(handle, "cublasCreate_v2", &library.create, &load_error) &&
             Resolve(handle, "cublasSetStream_v2", &library.set_stream, &load_error) &&
             Resolve(handle, "cublasSgemm_v2", &library.sgemm, &load_error) &&
             Resolve(handle, "cublasDestroy_v2", &library.destroy, &load_error);
  });
  if (!loaded) {
    *error = load_error;
    return nullptr;
  }
  return &library;
}

}  // namespace fabtrack::harness

#include "common/math_kernels.h"

#include <dlfcn.h>

namespace cellgan {

std::string blas_kernels() {
  // Looked up at run time: cellgan links OpenBLAS only through LibTorch, and
  // another BLAS behind libblas.so.3 must not stop the program from loading.
  using CoreName = char* (*)();
  const auto core_name = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  if (core_name == nullptr) return "unknown (OpenBLAS not loaded)";
  const char* name = core_name();
  return std::string("OpenBLAS ") + (name != nullptr ? name : "?");
}

}  // namespace cellgan

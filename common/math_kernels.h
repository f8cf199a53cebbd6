// Which BLAS kernels this process computes with. OpenBLAS picks its kernels
// by CPU model when it loads (or takes them from OPENBLAS_CORETYPE), and
// kernels for different CPUs round differently: the same seed, grid and
// worker count give the same result to the bit only with the same kernels.
// Runs therefore log and record the kernels in use.
//
// Thread-safety: may be called from any thread.
#pragma once

#include <string>

namespace cellgan {

// "OpenBLAS <core>" (e.g. "OpenBLAS SkylakeX") when OpenBLAS is loaded in
// this process, otherwise "unknown (OpenBLAS not loaded)".
std::string blas_kernels();

}  // namespace cellgan

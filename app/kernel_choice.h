// Runs every cellgan command on the OpenBLAS kernels that plan_blas_kernels
// (common/blas_kernels.h) chooses. OpenBLAS reads OPENBLAS_CORETYPE once, in
// its library constructor, before main(): the executable sets it (and
// CELLGAN_BLAS_CHOSEN, the same name, which tells the ranks a launcher starts
// that cellgan chose it) from its pre-initialisers (.preinit_array), which the
// dynamic loader runs before any shared library's constructor. Nothing is
// loaded twice and nothing is re-executed.
//
// Thread-safety: the choice is made before main() and before any thread;
// the functions below only read it.
#pragma once

#include <string>

namespace cellgan::app {

// "blas: OpenBLAS SkylakeX kernels, chosen from the CPU's features (...)"
// when cellgan chose the kernels (here or in the launcher that started
// this process); "" when the user or OpenBLAS did.
std::string kernel_choice_line();

// True when this process chose the kernels itself, false when it inherited a
// choice or made none.
bool kernels_chosen_here();

}  // namespace cellgan::app

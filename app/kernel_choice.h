// Runs every cellgan command on the OpenBLAS kernels that plan_blas_kernels
// (common/blas_kernels.h) chooses. OpenBLAS reads OPENBLAS_CORETYPE once, when
// it loads, before main(): to change it, the program re-executes itself once
// (execv of /proc/self/exe: same process, argv, environment and open files),
// with OPENBLAS_CORETYPE and CELLGAN_BLAS_CHOSEN (the same name, which tells
// the ranks a launcher starts that cellgan chose it) set.
//
// Thread-safety: call choose_kernels_at_start() first thing in main(),
// before any thread and before MPI_Init; the rest from the main thread.
#pragma once

#include <string>

namespace cellgan::app {

// Re-executes the program when the plan says so. A SIGUSR1 that comes
// meanwhile is held (blocked) and stays pending through the exec, for
// release_held_stop_signal(). If execv fails, the program goes on with the
// kernels OpenBLAS picked, and says so (a warning).
void choose_kernels_at_start(char** argv);

// Unblocks the SIGUSR1 held across the re-exec: call it once the command's
// own handling of SIGUSR1 is in place (or its default is wanted).
void release_held_stop_signal();

// "blas: OpenBLAS SkylakeX kernels, chosen from the CPU's features (...)"
// when cellgan chose the kernels (here or in the launcher that started
// this process); "" when the user or OpenBLAS did.
std::string kernel_choice_line();

// True when this process chose the kernels itself (it re-executed), false
// when it inherited a choice or made none.
bool kernels_chosen_here();

}  // namespace cellgan::app

// Runs every cellgan command on the OpenBLAS kernels that plan_blas_kernels
// (common/blas_kernels.h) chooses. OpenBLAS reads OPENBLAS_CORETYPE in its
// library constructor, and the C library's own constructor, which runs
// first, resets the environment to the one the process started with: a
// variable set before then is lost. So when the plan sets the variable, the
// program re-executes itself once (execv of /proc/self/exe: same process,
// argv and open files), with OPENBLAS_CORETYPE and CELLGAN_BLAS_CHOSEN (the
// same name, which tells the ranks a launcher starts that cellgan chose it)
// set. It does so from the executable's pre-initialiser, before any library's
// constructor has run, so LibTorch's start-up is not paid twice.
//
// Signals that stop a run (SIGINT, SIGTERM, SIGUSR1, SIGHUP) are held
// (blocked) from just before the re-exec until release_held_signals(), so
// one that comes meanwhile is delivered, once the new image has its handlers.
//
// Thread-safety: choose_kernels_before_the_libraries() from the
// pre-initialiser only; the rest from the main thread.
#pragma once

#include <string>

namespace cellgan::app {

// Re-executes the program when the plan says so; returns when it need not,
// or when execv failed (then OpenBLAS picks, and warn_if_not_chosen() says
// so). Uses no C++ library facility that needs its constructors.
void choose_kernels_before_the_libraries(char** argv);

// Unblocks the signals held across the re-exec: call it first thing in
// main(), once every handler of the pre-initialiser is in place.
void release_held_signals();

// Logs a warning when the kernels could not be chosen (execv failed, or the
// program was started through its loader, `ld.so cellgan ...`).
void warn_if_not_chosen();

// "blas: OpenBLAS SkylakeX kernels, chosen from the CPU's features (...)"
// when cellgan chose the kernels (here or in the launcher that started
// this process); "" when the user or OpenBLAS did.
std::string kernel_choice_line();

// True when this process chose the kernels itself (it re-executed), false
// when it inherited a choice or made none.
bool kernels_chosen_here();

}  // namespace cellgan::app

// Locks the compiler checks: clang's thread-safety attributes
// (https://clang.llvm.org/docs/ThreadSafetyAnalysis.html) as macros, and a
// mutex, a scoped lock and a condition variable that carry them.
//
// A member written `T value_ GUARDED_BY(mutex_);` may only be read or
// written with `mutex_` held; a function declared `REQUIRES(mutex_)` only
// called with it held. Under clang with -Wthread-safety a missed lock is a
// compile error (the CTest style.thread_safety builds the classes that
// share state across threads that way, and style.thread_safety_fails checks
// that it fails on an unguarded access). Under GCC the macros are empty.
//
// libstdc++'s std::mutex carries no attributes, so shared state uses
// `Mutex` and `MutexLock`. Condition variables are `CondVar`
// (std::condition_variable_any over the Mutex itself), waited on through
// the lock: `while (!ready_) lock.wait(changed_);`. A wait's condition is
// written in the locked function, not in a lambda, which the analysis
// checks as a function of its own that holds no lock.
//
// Thread-safety: Mutex is a mutex; MutexLock belongs to the thread that
// made it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define CELLGAN_THREAD_ATTRIBUTE(x) __attribute__((x))
#else
#define CELLGAN_THREAD_ATTRIBUTE(x)
#endif

#define CAPABILITY(x) CELLGAN_THREAD_ATTRIBUTE(capability(x))
#define SCOPED_CAPABILITY CELLGAN_THREAD_ATTRIBUTE(scoped_lockable)
#define GUARDED_BY(x) CELLGAN_THREAD_ATTRIBUTE(guarded_by(x))
#define PT_GUARDED_BY(x) CELLGAN_THREAD_ATTRIBUTE(pt_guarded_by(x))
#define REQUIRES(...) CELLGAN_THREAD_ATTRIBUTE(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) CELLGAN_THREAD_ATTRIBUTE(locks_excluded(__VA_ARGS__))
#define ACQUIRE(...) CELLGAN_THREAD_ATTRIBUTE(acquire_capability(__VA_ARGS__))
#define RELEASE(...) CELLGAN_THREAD_ATTRIBUTE(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) CELLGAN_THREAD_ATTRIBUTE(try_acquire_capability(__VA_ARGS__))
#define RETURN_CAPABILITY(x) CELLGAN_THREAD_ATTRIBUTE(lock_returned(x))
#define NO_THREAD_SAFETY_ANALYSIS CELLGAN_THREAD_ATTRIBUTE(no_thread_safety_analysis)

namespace cellgan {

// A std::mutex the analysis knows as a capability.
class CAPABILITY("mutex") Mutex {
 public:
  void lock() ACQUIRE() { mutex_.lock(); }
  void unlock() RELEASE() { mutex_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return mutex_.try_lock(); }

 private:
  std::mutex mutex_;
};

using CondVar = std::condition_variable_any;

// Holds a Mutex for its scope; waits on a CondVar, which lets the mutex go
// while it sleeps and holds it again when it returns.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mutex) ACQUIRE(mutex) : mutex_(mutex) { mutex_.lock(); }
  ~MutexLock() RELEASE() { mutex_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void wait(CondVar& changed) { changed.wait(mutex_); }
  // std::cv_status::timeout once `deadline` has passed.
  template <class Clock, class Duration>
  std::cv_status wait_until(CondVar& changed, const std::chrono::time_point<Clock, Duration>& deadline) {
    return changed.wait_until(mutex_, deadline);
  }

 private:
  Mutex& mutex_;
};

}  // namespace cellgan

// The oneTBB configuration the peer programs share (forkjoin_tbb.cpp, iter_tbb.cpp): a
// `tbb::task_arena` of exactly THREADS threads (the caller takes one of its slots) under
// `global_control::max_allowed_parallelism` = THREADS, the configuration oneTBB's
// documentation gives for a fixed thread count; with pinning, a `task_scheduler_observer` on
// the arena pins each thread that enters it to core (arena slot mod cores), as the workbench
// pins worker i of its own runtimes. And the runtime's identity: its version and the shared
// object that defines `TBB_runtime_version` (dladdr).
#pragma once

#include <dlfcn.h>

#include <memory>
#include <string>
#include <vector>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_scheduler_observer.h>
#include <oneapi/tbb/version.h>

#include "peer_util.hpp"

namespace peer {

// `oneTBB VERSION PATH`: the runtime that actually runs.
inline std::string tbb_identity() {
  Dl_info info{};
  const char *lib = dladdr(reinterpret_cast<void *>(&TBB_runtime_version), &info) && info.dli_fname
                        ? info.dli_fname
                        : "?";
  return std::string("oneTBB ") + TBB_runtime_version() + " " + lib;
}

// Pins every thread entering the arena to core (its slot in the arena mod cores).
class Pinner : public tbb::task_scheduler_observer {
 public:
  Pinner(tbb::task_arena &arena, std::vector<int> cores)
      : tbb::task_scheduler_observer(arena), cores_(std::move(cores)) {
    observe(true);
  }
  ~Pinner() override { observe(false); }
  void on_scheduler_entry(bool) override {
    int slot = tbb::this_task_arena::current_thread_index();
    if (slot >= 0) set_affinity({cores_[(size_t)slot % cores_.size()]});
  }

 private:
  std::vector<int> cores_;
};

// The arena of exactly `threads` threads. Construct it after `set_affinity(cores)` on the
// initial thread: oneTBB sizes its thread pool from that thread's mask.
class FixedArena {
 public:
  FixedArena(unsigned threads, bool pin, const std::vector<int> &cores)
      // The process may run THREADS threads in all, even beyond the cores (oneTBB's default
      // caps its workers at the cores minus one).
      : limit_(tbb::global_control::max_allowed_parallelism, threads), arena_((int)threads) {
    arena_.initialize();
    if (arena_.max_concurrency() != (int)threads)
      fail("the task_arena has " + std::to_string(arena_.max_concurrency()) + " threads, not " +
           std::to_string(threads));
    if (pin) pinner_ = std::make_unique<Pinner>(arena_, cores);
  }
  // Runs `f` in the arena, the caller participating.
  template <class F>
  void execute(F &&f) {
    arena_.execute([&] { f(); });
  }

 private:
  tbb::global_control limit_;
  tbb::task_arena arena_;
  std::unique_ptr<Pinner> pinner_;
};

}  // namespace peer

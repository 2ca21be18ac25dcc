// `taskpools forkjoin`'s oneTBB peer (see forkjoin_common.hpp for the command line and the
// output). The kernels run inside a `tbb::task_arena` of exactly THREADS threads (the caller
// takes one of its slots), the configuration oneTBB's documentation gives for a fixed thread
// count (with `global_control::max_allowed_parallelism` = THREADS); the fork is `tbb::task_group` (run + wait; variant `task_group`, the default) or
// `tbb::parallel_invoke` (variant `parallel_invoke`). With PIN=1 the caller is pinned to the
// first core and a `task_scheduler_observer` on the arena pins each thread that enters it to
// core (arena slot mod cores), as the workbench pins worker i of its own runtimes.
#include <dlfcn.h>

#include <memory>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_invoke.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#include <oneapi/tbb/task_scheduler_observer.h>
#include <oneapi/tbb/version.h>

#include "forkjoin_common.hpp"

struct JoinTaskGroup {
  template <class A, class B>
  static void join(A &&a, B &&b) {
    tbb::task_group g;
    g.run([&] { a(); });
    b();
    g.wait();
  }
};

struct JoinInvoke {
  template <class A, class B>
  static void join(A &&a, B &&b) {
    tbb::parallel_invoke([&] { a(); }, [&] { b(); });
  }
};

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
    if (slot >= 0) peer::set_affinity({cores_[(size_t)slot % cores_.size()]});
  }

 private:
  std::vector<int> cores_;
};

int main(int argc, char **argv) {
  peer::Args a = peer::parse_args(argc, argv, {"task_group", "parallel_invoke"});
  std::vector<int> cores = peer::cores();
  // The whole set of cores before oneTBB starts: it sizes its thread pool from the initial
  // thread's mask. The observer then pins each thread, the caller (arena slot 0) included.
  peer::set_affinity(cores);
  Dl_info info{};
  const char *lib = dladdr(reinterpret_cast<void *>(&TBB_runtime_version), &info) && info.dli_fname
                        ? info.dli_fname
                        : "?";
  std::printf("runtime oneTBB %s %s\n", TBB_runtime_version(), lib);
  // The process may run THREADS threads in all, even beyond the cores (oneTBB's default
  // caps its workers at the cores minus one).
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, a.threads);
  tbb::task_arena arena((int)a.threads);
  arena.initialize();
  if (arena.max_concurrency() != (int)a.threads)
    peer::fail("the task_arena has " + std::to_string(arena.max_concurrency()) +
               " threads, not " + std::to_string(a.threads));
  std::unique_ptr<Pinner> pinner;
  if (a.pin) pinner = std::make_unique<Pinner>(arena, cores);
  auto par = [&](auto &&f) { arena.execute([&] { f(); }); };
  if (a.variant == "parallel_invoke") return peer::run<JoinInvoke>(a, par);
  return peer::run<JoinTaskGroup>(a, par);
}

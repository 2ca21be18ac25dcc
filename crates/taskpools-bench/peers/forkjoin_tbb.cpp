// `taskpools forkjoin`'s oneTBB peer (see forkjoin_common.hpp for the command line and the
// output). The kernels run inside a `tbb::task_arena` of exactly THREADS threads (the caller
// takes one of its slots), the configuration oneTBB's documentation gives for a fixed thread
// count (with `global_control::max_allowed_parallelism` = THREADS); the fork is `tbb::task_group` (run + wait; variant `task_group`, the default) or
// `tbb::parallel_invoke` (variant `parallel_invoke`). With PIN=1 the caller is pinned to the
// first core and a `task_scheduler_observer` on the arena pins each thread that enters it to
// core (arena slot mod cores), as the workbench pins worker i of its own runtimes.
#include <oneapi/tbb/parallel_invoke.h>
#include <oneapi/tbb/task_group.h>

#include "forkjoin_common.hpp"
#include "tbb_arena.hpp"

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

int main(int argc, char **argv) {
  peer::Args a = peer::parse_args(argc, argv, {"task_group", "parallel_invoke"});
  std::vector<int> cores = peer::cores();
  // The whole set of cores before oneTBB starts: it sizes its thread pool from the initial
  // thread's mask. The observer then pins each thread, the caller (arena slot 0) included.
  peer::set_affinity(cores);
  std::printf("runtime %s\n", peer::tbb_identity().c_str());
  peer::FixedArena arena(a.threads, a.pin, cores);
  auto par = [&](auto &&f) { arena.execute(f); };
  if (a.variant == "parallel_invoke") return peer::run<JoinInvoke>(a, par);
  return peer::run<JoinTaskGroup>(a, par);
}

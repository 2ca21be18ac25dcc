// `taskpools forkjoin`'s OpenMP-tasks peer, built with `clang++ -fopenmp` against LLVM's
// OpenMP runtime (libomp) and run in a process of its own: libgomp and libomp define the same
// `omp_*`/`GOMP_*` entry points, and in one process objects built for one silently bind to
// whichever loaded first. See forkjoin_common.hpp for the command line and the output; the
// `runtime` line names the shared object that defines `omp_get_num_threads` (dladdr), so the
// workbench can refuse a run that bound to libgomp.
//
// A fork is `#pragma omp task` for the first half, the second half run by the caller, then
// `#pragma omp taskwait`; the kernel starts in a `#pragma omp single` inside a
// `#pragma omp parallel num_threads(THREADS)` region (dynamic adjustment off). Placement is
// OpenMP's own: with PIN=1 the workbench sets OMP_PLACES to its cores (one place each, in the
// order it pins its workers) and OMP_PROC_BIND=close, so thread i runs on place i; this
// program checks that binding is on. KMP_BLOCKTIME is left at its default (200 ms: threads
// spin that long after a region before they sleep), the configuration libomp ships with.
#include "forkjoin_common.hpp"
#include "omp_team.hpp"

struct JoinTask {
  template <class A, class B>
  static void join(A &&a, B &&b) {
#pragma omp task default(shared)
    a();
    b();
#pragma omp taskwait
  }
};

int main(int argc, char **argv) {
  peer::Args a = peer::parse_args(argc, argv, {"tasks"});
  // The whole set of cores, before the runtime starts: libomp takes its view of the machine
  // from the initial thread's mask, and the places must lie inside it.
  peer::set_affinity(peer::cores());
  std::printf("runtime %s\n", peer::omp_identity().c_str());
  peer::omp_fixed_team(a.threads, a.pin);
  auto par = [&](auto &&f) {
#pragma omp parallel num_threads(a.threads)
#pragma omp single
    f();
  };
  return peer::run<JoinTask>(a, par);
}

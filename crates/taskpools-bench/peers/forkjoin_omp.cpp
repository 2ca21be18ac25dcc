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
#include <dlfcn.h>
#include <omp.h>

#include "forkjoin_common.hpp"

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
  Dl_info info{};
  const char *lib = dladdr(reinterpret_cast<void *>(&omp_get_num_threads), &info) && info.dli_fname
                        ? info.dli_fname
                        : "?";
  const char *base = std::strrchr(lib, '/') ? std::strrchr(lib, '/') + 1 : lib;
  std::printf("runtime %s %s openmp-%d\n", base, lib, _OPENMP);
  omp_set_dynamic(0);
  if (a.pin && omp_get_proc_bind() == omp_proc_bind_false)
    peer::fail("PIN=1 but OpenMP binding is off (set OMP_PLACES and OMP_PROC_BIND)");
  int team = 0;
#pragma omp parallel num_threads(a.threads)
#pragma omp single
  team = omp_get_num_threads();
  if (team != (int)a.threads)
    peer::fail("the parallel region has " + std::to_string(team) + " threads, not " +
               std::to_string(a.threads));
  auto par = [&](auto &&f) {
#pragma omp parallel num_threads(a.threads)
#pragma omp single
    f();
  };
  return peer::run<JoinTask>(a, par);
}

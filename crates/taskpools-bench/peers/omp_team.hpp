// What the libomp peer programs share (forkjoin_omp.cpp, iter_omp.cpp): the runtime's
// identity (the shared object that defines `omp_get_num_threads`, found with dladdr, so the
// workbench can refuse a run that bound to libgomp), and the check that a parallel region
// gets exactly THREADS threads (dynamic adjustment off) and, with pinning, that OpenMP's
// binding is on (the workbench sets OMP_PLACES and OMP_PROC_BIND).
#pragma once

#include <dlfcn.h>
#include <omp.h>

#include <cstring>
#include <string>

#include "peer_util.hpp"

namespace peer {

// `LIBRARY PATH openmp-VERSION`, e.g. `libomp.so.5 /usr/lib/llvm-14/lib/libomp.so.5 openmp-201811`.
inline std::string omp_identity() {
  Dl_info info{};
  const char *lib = dladdr(reinterpret_cast<void *>(&omp_get_num_threads), &info) && info.dli_fname
                        ? info.dli_fname
                        : "?";
  const char *base = std::strrchr(lib, '/') ? std::strrchr(lib, '/') + 1 : lib;
  return std::string(base) + " " + lib + " openmp-" + std::to_string(_OPENMP);
}

// Dynamic adjustment off; fails unless a region of `threads` threads has that many (and,
// with `pin`, unless binding is on).
inline void omp_fixed_team(unsigned threads, bool pin) {
  omp_set_dynamic(0);
  if (pin && omp_get_proc_bind() == omp_proc_bind_false)
    fail("PIN=1 but OpenMP binding is off (set OMP_PLACES and OMP_PROC_BIND)");
  int team = 0;
#pragma omp parallel num_threads(threads)
#pragma omp single
  team = omp_get_num_threads();
  if (team != (int)threads)
    fail("the parallel region has " + std::to_string(team) + " threads, not " +
         std::to_string(threads));
}

}  // namespace peer

/* Part of the OpenMP drivers (`suite_omp.c`, `dataflow_omp.c`), built twice into shared
 * objects: with GCC against libgomp and with clang against LLVM's libomp. The workbench loads
 * one of them in a process of its own (libgomp and libomp define the same `omp_*`/`GOMP_*`
 * entry points, and code built for one binds to whichever loaded first) and checks, through
 * this function, which runtime the driver's OpenMP calls actually reach: the path of the
 * shared object that defines `omp_get_num_threads`, as the dynamic linker resolved it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp.h>

const char *taskpools_driver_runtime(void) {
    Dl_info info;
    if (dladdr((void *)&omp_get_num_threads, &info) && info.dli_fname) return info.dli_fname;
    return "?";
}

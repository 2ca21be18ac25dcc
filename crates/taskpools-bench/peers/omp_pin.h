/* Shared by the OpenMP peers: pins the calling OpenMP thread to core (thread number mod
 * cores), as the Rust side pins worker i to core i mod cores. libgomp keeps its threads, so
 * this holds for later regions. */
#ifndef TASKPOOLS_OMP_PIN_H
#define TASKPOOLS_OMP_PIN_H
#include <omp.h>
#include <sched.h>
#include <stdint.h>
#include <unistd.h>

static void pin_me(int32_t pin) {
    if (!pin) return;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(omp_get_thread_num() % n, &set);
    sched_setaffinity(0, sizeof set, &set);
}
#endif

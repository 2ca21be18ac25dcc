/* The team every OpenMP driver runs in (suite_omp.c, dataflow_omp.c): `timed` starts a
 * parallel region of `threads` threads, pins each to the workbench's core (thread number mod
 * cores) from TASKPOOLS_PEER_CORES (the cores the workbench pins its own workers to, in its
 * order; else core = thread number mod the online CPUs), as the Rust side pins worker i,
 * checks that the team has the threads asked for, and times one thread's task creation and
 * the wait for every task. */
#ifndef TASKPOOLS_OMP_PIN_H
#define TASKPOOLS_OMP_PIN_H
#include <omp.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

static int pin_core(int i) {
    const char *s = getenv("TASKPOOLS_PEER_CORES");
    int cores[CPU_SETSIZE], n = 0;
    while (s && *s && n < CPU_SETSIZE) {
        char *end;
        long c = strtol(s, &end, 10);
        if (end == s || c < 0 || c >= CPU_SETSIZE) break;
        cores[n++] = (int)c;
        s = *end == ',' ? end + 1 : end;
    }
    if (n > 0) return cores[i % n];
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online < 1 ? 0 : (int)(i % online);
}

static void pin_me(int32_t pin) {
    if (!pin) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(pin_core(omp_get_thread_num()), &set);
    sched_setaffinity(0, sizeof set, &set);
}

/* Inside a parallel region: 1 if the team has `threads` threads (else the driver reports a
 * negative time, which the workbench refuses). */
static int team_ok(int32_t threads) { return omp_get_num_threads() == threads; }

/* Runs body(arg) on `threads` pinned threads, in one `single` (the task creator), then waits
 * for every task; returns the seconds that took, or -1 when the team did not get `threads`
 * threads. Task constructs in `body` are orphaned: they bind to this parallel region. */
static double timed(void (*body)(void *), void *arg, int32_t threads, int32_t pin) {
    double t0 = 0, t1 = 0;
    int ok = 1;
#pragma omp parallel num_threads(threads)
    {
        pin_me(pin);
#pragma omp barrier
#pragma omp single
        {
            ok = team_ok(threads);
            t0 = omp_get_wtime();
            body(arg);
#pragma omp taskwait
            t1 = omp_get_wtime();
        }
    }
    return ok ? t1 - t0 : -1.0;
}
#endif

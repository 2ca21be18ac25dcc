/* OpenMP peers of `taskpools dataflow`: the same task graphs as the Rust side, run as OpenMP
 * tasks with `depend` clauses (libgomp when built with GCC). One thread creates every task
 * inside `single`, as the Rust side's scope does; the graph arrives from Rust as arrays:
 * task t writes block out[t] (inout) and reads the blocks reads[3t .. 3t + nreads[t]).
 * The task body is the same as the Rust one: d[o] += 1 + the values read. */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdint.h>
#include <unistd.h>

#include "omp_pin.h"

#define STRIDE 8 /* u64 per block: one 64-byte line each */

static inline void body(uint64_t *d, int32_t o, const int32_t *r, int32_t k) {
    uint64_t s = 1;
    for (int32_t j = 0; j < k; j++) s += d[(int64_t)r[j] * STRIDE];
    d[(int64_t)o * STRIDE] += s;
}


/* A graph's arrays, and for the rows variant the row width. */
struct graph_args {
    uint64_t *d;
    int64_t n, width;
    const int32_t *out, *reads, *nreads;
};

static void graph_body(void *p) {
    struct graph_args *x = p;
    uint64_t *d = x->d;
    for (int64_t t = 0; t < x->n; t++) {
        int32_t o = x->out[t], k = x->nreads[t];
        const int32_t *r = x->reads + 3 * t;
        uint64_t *w = d + (int64_t)o * STRIDE;
        switch (k) {
        case 0:
#pragma omp task firstprivate(o, r, k) depend(inout : w[0])
            body(d, o, r, k);
            break;
        case 1:
#pragma omp task firstprivate(o, r, k) depend(inout : w[0]) depend(in : d[(int64_t)r[0] * STRIDE])
            body(d, o, r, k);
            break;
        case 2:
#pragma omp task firstprivate(o, r, k) depend(inout : w[0]) \
    depend(in : d[(int64_t)r[0] * STRIDE], d[(int64_t)r[1] * STRIDE])
            body(d, o, r, k);
            break;
        default:
#pragma omp task firstprivate(o, r, k) depend(inout : w[0])                                    \
    depend(in : d[(int64_t)r[0] * STRIDE], d[(int64_t)r[1] * STRIDE], d[(int64_t)r[2] * STRIDE])
            body(d, o, r, k);
            break;
        }
    }
}

static void rows_body(void *p) {
    struct graph_args *x = p;
    uint64_t *d = x->d;
    for (int64_t t = 0; t < x->n; t++) {
        int32_t o = x->out[t], k = x->nreads[t];
        const int32_t *r = x->reads + 3 * t;
#pragma omp task firstprivate(o, r, k)
        body(d, o, r, k);
        if ((t + 1) % x->width == 0) {
#pragma omp taskwait
        }
    }
}

/* A graph without reads whose written blocks are `mutexinoutset`: the additions into a
 * block run one at a time, in any order. */
static void commute_body(void *p) {
    struct graph_args *x = p;
    uint64_t *d = x->d;
    for (int64_t t = 0; t < x->n; t++) {
        int32_t o = x->out[t];
        uint64_t *w = d + (int64_t)o * STRIDE;
#pragma omp task firstprivate(o) depend(mutexinoutset : w[0])
        body(d, o, 0, 0);
    }
}

/* The accumulate graph as an OpenMP 5 task reduction: the blocks are a `task_reduction` of
 * the taskgroup, and each task adds into them `in_reduction` (the runtime's copy per thread,
 * folded in at the taskgroup's end). The words of `d`: a file-scope variable, because clang 14
 * crashes on an array section whose length is a local or a field (one run per process). */
static int64_t reduce_words;

static void reduce_body(void *p) {
    struct graph_args *x = p;
    uint64_t *d = x->d;
#pragma omp taskgroup task_reduction(+ : d[0 : reduce_words])
    for (int64_t t = 0; t < x->n; t++) {
        int32_t o = x->out[t];
#pragma omp task firstprivate(o) in_reduction(+ : d[0 : reduce_words])
        d[(int64_t)o * STRIDE] += 1;
    }
}

/* Runs the graph on `threads` threads; returns the elapsed seconds (-1 when the team did not
 * get `threads` threads). `blocks`, the blocks in `d`, is for drivers that register them, as
 * StarPU's does. */
double taskpools_dataflow_graph(uint64_t *d, int64_t blocks, int64_t n, const int32_t *out,
                                const int32_t *reads, const int32_t *nreads, int32_t threads,
                                int32_t pin) {
    (void)blocks;
    struct graph_args x = {d, n, 0, out, reads, nreads};
    return timed(graph_body, &x, threads, pin);
}

/* The same tasks without dependences, a taskwait after every row of `width` tasks (what a
 * programmer writes when the rows are known to be independent inside). */
double taskpools_dataflow_rows(uint64_t *d, int64_t blocks, int64_t n, int64_t width,
                               const int32_t *out, const int32_t *reads, const int32_t *nreads,
                               int32_t threads, int32_t pin) {
    (void)blocks;
    struct graph_args x = {d, n, width, out, reads, nreads};
    return timed(rows_body, &x, threads, pin);
}

/* The accumulate graph (no reads) with its written blocks `mutexinoutset`. */
double taskpools_dataflow_commute(uint64_t *d, int64_t blocks, int64_t n, const int32_t *out,
                                  int32_t threads, int32_t pin) {
    (void)blocks;
    struct graph_args x = {d, n, 0, out, 0, 0};
    return timed(commute_body, &x, threads, pin);
}

/* The accumulate graph (no reads) as a task reduction into the blocks. */
double taskpools_dataflow_reduce(uint64_t *d, int64_t blocks, int64_t n, const int32_t *out,
                                 int32_t threads, int32_t pin) {
    struct graph_args x = {d, n, 0, out, 0, 0};
    reduce_words = blocks * STRIDE;
    return timed(reduce_body, &x, threads, pin);
}

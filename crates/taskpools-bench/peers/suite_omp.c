/* OpenMP drivers of `taskpools suite` (Papakonstantinou, PARTEE (2015), chapter 4): the six
 * programs as OpenMP tasks (with `depend` clauses where the program has dependences,
 * `taskwait` where it is recursive), run by libgomp when built with GCC. The inner kernels
 * are not here: every driver receives them as function pointers to the Rust kernels that
 * every other variant calls, so the comparison is between runtimes, not between compilers.
 *
 * Matrices are row-major, n x n, rows ld apart (ld = n plus a cache line, see the Rust side);
 * tile (i, j) of bs x bs starts at a + i*bs*ld + j*bs. A task's `depend` names the first element of each tile or band it uses,
 * which stands for the whole tile (tiles do not overlap). Each driver returns the seconds
 * between the start and the end of its work, measured inside the parallel region after the
 * threads are up and pinned, or -1 when the team did not get `threads` threads. */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdint.h>
#include <unistd.h>

#include "omp_pin.h"


/* ---- Black-Scholes: one task per block of options (no dependences). ---- */
typedef void (*bs_kernel)(const void *opts, double *prices, int64_t n);

struct bs_args {
    const char *opts;
    int64_t opt_size;
    double *prices;
    int64_t n, block;
    bs_kernel k;
};

static void bs_body(void *p) {
    struct bs_args *x = p;
    for (int64_t s = 0; s < x->n; s += x->block) {
        int64_t m = x->n - s < x->block ? x->n - s : x->block;
#pragma omp task firstprivate(s, m)
        x->k(x->opts + s * x->opt_size, x->prices + s, m);
    }
}

double taskpools_suite_blackscholes(const char *opts, int64_t opt_size, double *prices,
                                    int64_t n, int64_t block, bs_kernel k, int32_t threads,
                                    int32_t pin) {
    struct bs_args x = {opts, opt_size, prices, n, block, k};
    return timed(bs_body, &x, threads, pin);
}

/* ---- Tiled factorizations ---- */
typedef void (*t1_kernel)(double *a, int64_t bs, int64_t ld);
typedef void (*t2_kernel)(const double *a, double *b, int64_t bs, int64_t ld);
typedef void (*t3_kernel)(const double *a, const double *b, double *c, int64_t bs, int64_t ld);

struct tiled_args {
    double *a;
    int64_t n, ld, bs;
    t1_kernel k1;
    t2_kernel k2a, k2b;
    t3_kernel k3;
    /* Cholesky: OpenMP's `priority` on the critical path (potrf 2, trsm 1) when set; the
     * child then runs with OMP_MAX_TASK_PRIORITY=2. */
    int prio;
};

#define TILE(i, j) (a + (i) * bs * ld + (j) * bs)

/* Cholesky (lower, A = L L^T): k1 = potrf, k2a = trsm, k2b = syrk, k3 = gemm (C -= A B^T). */
static void cholesky_body(void *p) {
    struct tiled_args *x = p;
    double *a = x->a;
    int64_t n = x->n, ld = x->ld, bs = x->bs, nt = n / bs;
    for (int64_t k = 0; k < nt; k++) {
        double *akk = TILE(k, k);
#pragma omp task firstprivate(akk) depend(inout : akk[0]) priority(2 * x->prio)
        x->k1(akk, bs, ld);
        for (int64_t i = k + 1; i < nt; i++) {
            double *aik = TILE(i, k);
#pragma omp task firstprivate(akk, aik) depend(in : akk[0]) depend(inout : aik[0]) priority(x->prio)
            x->k2a(akk, aik, bs, ld);
        }
        for (int64_t i = k + 1; i < nt; i++) {
            double *aik = TILE(i, k), *aii = TILE(i, i);
#pragma omp task firstprivate(aik, aii) depend(in : aik[0]) depend(inout : aii[0])
            x->k2b(aik, aii, bs, ld);
            for (int64_t j = k + 1; j < i; j++) {
                double *ajk = TILE(j, k), *aij = TILE(i, j);
#pragma omp task firstprivate(aik, ajk, aij) depend(in : aik[0], ajk[0]) depend(inout : aij[0])
                x->k3(aik, ajk, aij, bs, ld);
            }
        }
    }
}

double taskpools_suite_cholesky_prio(double *a, int64_t n, int64_t ld, int64_t bs,
                                     t1_kernel potrf, t2_kernel trsm, t2_kernel syrk,
                                     t3_kernel gemm, int32_t threads, int32_t pin) {
    struct tiled_args x = {a, n, ld, bs, potrf, trsm, syrk, gemm, 1};
    if (omp_get_max_task_priority() < 2)
        return -2.0; /* the runtime would ignore the clauses */
    return timed(cholesky_body, &x, threads, pin);
}

double taskpools_suite_cholesky(double *a, int64_t n, int64_t ld, int64_t bs, t1_kernel potrf,
                                t2_kernel trsm, t2_kernel syrk, t3_kernel gemm, int32_t threads,
                                int32_t pin) {
    struct tiled_args x = {a, n, ld, bs, potrf, trsm, syrk, gemm, 0};
    return timed(cholesky_body, &x, threads, pin);
}

/* LU without pivoting (A = L U, L unit lower): k1 = getrf, k2a = trsm of a row tile (L^-1 B),
 * k2b = trsm of a column tile (B U^-1), k3 = gemm (C -= A B). */
static void lu_body(void *p) {
    struct tiled_args *x = p;
    double *a = x->a;
    int64_t n = x->n, ld = x->ld, bs = x->bs, nt = n / bs;
    for (int64_t k = 0; k < nt; k++) {
        double *akk = TILE(k, k);
#pragma omp task firstprivate(akk) depend(inout : akk[0])
        x->k1(akk, bs, ld);
        for (int64_t j = k + 1; j < nt; j++) {
            double *akj = TILE(k, j);
#pragma omp task firstprivate(akk, akj) depend(in : akk[0]) depend(inout : akj[0])
            x->k2a(akk, akj, bs, ld);
        }
        for (int64_t i = k + 1; i < nt; i++) {
            double *aik = TILE(i, k);
#pragma omp task firstprivate(akk, aik) depend(in : akk[0]) depend(inout : aik[0])
            x->k2b(akk, aik, bs, ld);
        }
        for (int64_t i = k + 1; i < nt; i++) {
            for (int64_t j = k + 1; j < nt; j++) {
                double *aik = TILE(i, k), *akj = TILE(k, j), *aij = TILE(i, j);
#pragma omp task firstprivate(aik, akj, aij) depend(in : aik[0], akj[0]) depend(inout : aij[0])
                x->k3(aik, akj, aij, bs, ld);
            }
        }
    }
}

double taskpools_suite_lu(double *a, int64_t n, int64_t ld, int64_t bs, t1_kernel getrf, t2_kernel trsm_l,
                          t2_kernel trsm_u, t3_kernel gemm, int32_t threads, int32_t pin) {
    struct tiled_args x = {a, n, ld, bs, getrf, trsm_l, trsm_u, gemm};
    return timed(lu_body, &x, threads, pin);
}

/* ---- Heat diffusion: bands of rows, two arrays swapped each step; a band depends on the
 * bands above and below it in the previous step. ---- */
typedef void (*heat_kernel)(const double *src, int64_t src_row0, int64_t src_rows, double *dst,
                            int64_t dst_row0, int64_t dst_rows, int64_t n);

struct heat_args {
    double *a, *b;
    int64_t n, steps, band;
    heat_kernel k;
};

static void heat_body(void *p) {
    struct heat_args *x = p;
    int64_t n = x->n, band = x->band;
    for (int64_t s = 0; s < x->steps; s++) {
        double *src = s % 2 == 0 ? x->a : x->b, *dst = s % 2 == 0 ? x->b : x->a;
        for (int64_t r0 = 0; r0 < n; r0 += band) {
            int64_t r1 = r0 + band < n ? r0 + band : n;
            int64_t s0 = r0 > 0 ? r0 - 1 : 0, s1 = r1 < n ? r1 + 1 : n;
            /* The first rows of the bands that hold the rows read. */
            int64_t up = r0 >= band ? r0 - band : r0, down = r1 < n ? r1 : r0;
            heat_kernel k = x->k;
#pragma omp task firstprivate(src, dst, r0, r1, s0, s1, k) \
    depend(in : src[up * n], src[r0 * n], src[down * n]) depend(out : dst[r0 * n])
            k(src + s0 * n, s0, s1 - s0, dst + r0 * n, r0, r1 - r0, n);
        }
    }
}

double taskpools_suite_heat(double *a, double *b, int64_t n, int64_t steps, int64_t band,
                            heat_kernel k, int32_t threads, int32_t pin) {
    struct heat_args x = {a, b, n, steps, band, k};
    return timed(heat_body, &x, threads, pin);
}

/* ---- Matrix multiply, recursive (C += A B on quadrants), a taskwait between halves. ---- */
typedef void (*mm_kernel)(const double *a, const double *b, double *c, int64_t m, int64_t ld);

static void mm_rec(const double *a, const double *b, double *c, int64_t m, int64_t ld,
                   int64_t leaf, mm_kernel k) {
    if (m <= leaf) {
        k(a, b, c, m, ld);
        return;
    }
    int64_t h = m / 2;
#define Q(p, i, j) ((p) + (i) * h * ld + (j) * h)
#pragma omp task
    mm_rec(Q(a, 0, 0), Q(b, 0, 0), Q(c, 0, 0), h, ld, leaf, k);
#pragma omp task
    mm_rec(Q(a, 0, 0), Q(b, 0, 1), Q(c, 0, 1), h, ld, leaf, k);
#pragma omp task
    mm_rec(Q(a, 1, 0), Q(b, 0, 0), Q(c, 1, 0), h, ld, leaf, k);
    mm_rec(Q(a, 1, 0), Q(b, 0, 1), Q(c, 1, 1), h, ld, leaf, k);
#pragma omp taskwait
#pragma omp task
    mm_rec(Q(a, 0, 1), Q(b, 1, 0), Q(c, 0, 0), h, ld, leaf, k);
#pragma omp task
    mm_rec(Q(a, 0, 1), Q(b, 1, 1), Q(c, 0, 1), h, ld, leaf, k);
#pragma omp task
    mm_rec(Q(a, 1, 1), Q(b, 1, 0), Q(c, 1, 0), h, ld, leaf, k);
    mm_rec(Q(a, 1, 1), Q(b, 1, 1), Q(c, 1, 1), h, ld, leaf, k);
#pragma omp taskwait
#undef Q
}

struct mm_args {
    const double *a, *b;
    double *c;
    int64_t n, ld, leaf;
    mm_kernel k;
};

static void mm_body(void *p) {
    struct mm_args *x = p;
    mm_rec(x->a, x->b, x->c, x->n, x->ld, x->leaf, x->k);
}

double taskpools_suite_matmul(const double *a, const double *b, double *c, int64_t n,
                              int64_t ld, int64_t leaf, mm_kernel k, int32_t threads,
                              int32_t pin) {
    struct mm_args x = {a, b, c, n, ld, leaf, k};
    return timed(mm_body, &x, threads, pin);
}

/* ---- Mergesort, recursive: sort the halves (one as a task), taskwait, merge. ---- */
typedef void (*sort_kernel)(uint32_t *d, int64_t n);
typedef void (*merge_kernel)(uint32_t *d, uint32_t *tmp, int64_t n, int64_t mid);

static void ms_rec(uint32_t *d, uint32_t *tmp, int64_t n, int64_t leaf, sort_kernel sort,
                   merge_kernel merge) {
    if (n <= leaf) {
        sort(d, n);
        return;
    }
    int64_t mid = n / 2;
#pragma omp task
    ms_rec(d, tmp, mid, leaf, sort, merge);
    ms_rec(d + mid, tmp + mid, n - mid, leaf, sort, merge);
#pragma omp taskwait
    merge(d, tmp, n, mid);
}

struct ms_args {
    uint32_t *d, *tmp;
    int64_t n, leaf;
    sort_kernel sort;
    merge_kernel merge;
};

static void ms_body(void *p) {
    struct ms_args *x = p;
    ms_rec(x->d, x->tmp, x->n, x->leaf, x->sort, x->merge);
}

double taskpools_suite_mergesort(uint32_t *d, uint32_t *tmp, int64_t n, int64_t leaf,
                                 sort_kernel sort, merge_kernel merge, int32_t threads,
                                 int32_t pin) {
    struct ms_args x = {d, tmp, n, leaf, sort, merge};
    return timed(ms_body, &x, threads, pin);
}

/* StarPU drivers of `taskpools dataflow` and `taskpools suite` (Cholesky, LU, heat): the same
 * task graphs as the OpenMP drivers (dataflow_omp.c, suite_omp.c), submitted with
 * `starpu_task_insert` on registered data (STARPU_R / STARPU_RW / STARPU_W), StarPU deriving
 * the dependences from the access modes in submission order, as OpenMP `depend` does. Built
 * into a shared object where StarPU 1.3 is installed (pkg-config starpu-1.3); the workbench
 * loads it in a process of its own and checks, through `taskpools_driver_runtime`, that the
 * StarPU it reaches is libstarpu.
 *
 * Configuration: CPU workers only, `threads` of them (`starpu_conf.ncpus`; CUDA, OpenCL and
 * MIC off), StarPU's default scheduler (`lws`, locality work stealing: the default of StarPU
 * 1.3, named explicitly, and the one its documentation suggests for CPU-only runs without
 * performance models),
 * workers bound to cores by StarPU itself when PIN=1 (its default) and unbound otherwise
 * (STARPU_WORKERS_NOBIND=1). The calling thread submits the tasks and waits, as StarPU's own
 * examples do; it is not a worker (so at T threads StarPU runs T workers plus the
 * submitter, which sleeps in `starpu_task_wait_for_all` once it has submitted everything).
 * Each driver call is a whole StarPU session: `starpu_init`, registration, submission,
 * `starpu_task_wait_for_all`, unregistration, `starpu_shutdown`; the seconds returned run from
 * the first submission to the end of `starpu_task_wait_for_all`, as StarPU's own Cholesky
 * example times it (registration and unregistration are outside, the workers are up). The
 * rows variant turns StarPU's sequential consistency off on every handle: no dependences are
 * derived, a wait for all after each row orders the rows.
 *
 * The inner kernels are the workbench's Rust kernels, received as function pointers. Every
 * data handle is registered on main memory and only CPU workers exist, so a task's buffer
 * pointers are the registered addresses; the heat kernel, which reads across band
 * boundaries, uses the arrays' own pointers (handed over in its arguments) and its handles
 * only for ordering. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <starpu.h>

const char *taskpools_driver_runtime(void) {
    Dl_info info;
    if (dladdr((void *)&starpu_init, &info) && info.dli_fname) return info.dli_fname;
    return "?";
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Starts StarPU with `threads` CPU workers and the lws scheduler; 0 on success, -1 when it
 * started with another number of workers. (The workbench clears every STARPU_* variable of
 * the user's before it starts this process, so nothing overrides this configuration.) */
static int start(int32_t threads, int32_t pin) {
    setenv("STARPU_SILENT", "1", 1);
    setenv("STARPU_WORKERS_NOBIND", pin ? "0" : "1", 1);
    struct starpu_conf conf;
    starpu_conf_init(&conf);
    conf.ncpus = threads;
    conf.ncuda = 0;
    conf.nopencl = 0;
    conf.nmic = 0;
    conf.sched_policy_name = "lws";
    if (starpu_init(&conf) != 0) return 1;
    if ((int)starpu_cpu_worker_get_count() != threads) {
        fprintf(stderr, "starpu: started %u CPU workers, not %d\n", starpu_cpu_worker_get_count(),
                (int)threads);
        exit(1);
    }
    return 0;
}

/* A StarPU call that failed: one line on stderr and exit status 1 (the workbench reports the
 * line and stops the run). */
#define FAIL(what)                                                   \
    do {                                                             \
        fprintf(stderr, "starpu: %s failed\n", what);                \
        exit(1);                                                     \
    } while (0)

/* ---- Data-flow graphs: task t writes block out[t] and reads blocks reads[3t ..]. ---- */
#define STRIDE 8

static void graph_cpu(void *buffers[], void *arg) {
    (void)arg;
    unsigned k = STARPU_TASK_GET_NBUFFERS(starpu_task_get_current());
    uint64_t *w = (uint64_t *)STARPU_VECTOR_GET_PTR(buffers[0]);
    uint64_t s = 1;
    for (unsigned j = 1; j < k; j++) s += ((uint64_t *)STARPU_VECTOR_GET_PTR(buffers[j]))[0];
    w[0] += s;
}

static struct starpu_codelet graph_cl[4] = {
    {.cpu_funcs = {graph_cpu}, .nbuffers = 1, .modes = {STARPU_RW}},
    {.cpu_funcs = {graph_cpu}, .nbuffers = 2, .modes = {STARPU_RW, STARPU_R}},
    {.cpu_funcs = {graph_cpu}, .nbuffers = 3, .modes = {STARPU_RW, STARPU_R, STARPU_R}},
    {.cpu_funcs = {graph_cpu}, .nbuffers = 4, .modes = {STARPU_RW, STARPU_R, STARPU_R, STARPU_R}},
};

/* The accumulate graph's codelet: the written block is commutative (a codelet's modes must
 * match the ones its tasks are inserted with). */
static struct starpu_codelet commute_cl = {
    .cpu_funcs = {graph_cpu}, .nbuffers = 1, .modes = {STARPU_RW | STARPU_COMMUTE}};

/* The accumulate graph's codelets as a reduction (STARPU_REDUX): a task adds into a copy
 * per worker, which StarPU starts with `redux_init` and folds with `redux_fold`. */
static void redux_init(void *buffers[], void *arg) {
    (void)arg;
    uint64_t *w = (uint64_t *)STARPU_VECTOR_GET_PTR(buffers[0]);
    unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
    for (unsigned i = 0; i < n; i++) w[i] = 0;
}

static void redux_fold(void *buffers[], void *arg) {
    (void)arg;
    uint64_t *a = (uint64_t *)STARPU_VECTOR_GET_PTR(buffers[0]);
    const uint64_t *b = (const uint64_t *)STARPU_VECTOR_GET_PTR(buffers[1]);
    unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
    for (unsigned i = 0; i < n; i++) a[i] += b[i];
}

static struct starpu_codelet redux_init_cl = {
    .cpu_funcs = {redux_init}, .nbuffers = 1, .modes = {STARPU_W}};
static struct starpu_codelet redux_fold_cl = {
    .cpu_funcs = {redux_fold}, .nbuffers = 2, .modes = {STARPU_RW, STARPU_R}};
static struct starpu_codelet redux_cl = {
    .cpu_funcs = {graph_cpu}, .nbuffers = 1, .modes = {STARPU_REDUX}};

/* How the accumulate graph declares its written block. */
enum { MODE_RW, MODE_COMMUTE, MODE_REDUX };

static double graph(uint64_t *d, int64_t blocks, int64_t n, int64_t width, const int32_t *out,
                    const int32_t *reads, const int32_t *nreads, int32_t threads, int32_t pin,
                    int mode) {
    if (start(threads, pin) != 0) FAIL("starpu_init");
    starpu_data_handle_t *h = malloc((size_t)blocks * sizeof *h);
    if (!h) FAIL("malloc");
    for (int64_t b = 0; b < blocks; b++) {
        starpu_vector_data_register(&h[b], STARPU_MAIN_RAM, (uintptr_t)(d + b * STRIDE), STRIDE,
                                    sizeof(uint64_t));
        /* Rows: no dependences within a row (there are none to find), a wait per row. */
        if (width > 0) starpu_data_set_sequential_consistency_flag(h[b], 0);
        if (mode == MODE_REDUX) starpu_data_set_reduction_methods(h[b], &redux_fold_cl, &redux_init_cl);
    }
    double t0 = now();
    for (int64_t t = 0; t < n; t++) {
        int k = nreads[t];
        const int32_t *r = k ? reads + 3 * t : NULL;
        int rc;
        switch (k) {
        case 0:
            rc = mode == MODE_COMMUTE
                     ? starpu_task_insert(&commute_cl, STARPU_RW | STARPU_COMMUTE, h[out[t]], 0)
                 : mode == MODE_REDUX ? starpu_task_insert(&redux_cl, STARPU_REDUX, h[out[t]], 0)
                                      : starpu_task_insert(&graph_cl[0], STARPU_RW, h[out[t]], 0);
            break;
        case 1:
            rc = starpu_task_insert(&graph_cl[1], STARPU_RW, h[out[t]], STARPU_R, h[r[0]], 0);
            break;
        case 2:
            rc = starpu_task_insert(&graph_cl[2], STARPU_RW, h[out[t]], STARPU_R, h[r[0]],
                                    STARPU_R, h[r[1]], 0);
            break;
        default:
            rc = starpu_task_insert(&graph_cl[3], STARPU_RW, h[out[t]], STARPU_R, h[r[0]],
                                    STARPU_R, h[r[1]], STARPU_R, h[r[2]], 0);
            break;
        }
        if (rc != 0) FAIL("starpu_task_insert");
        if (width > 0 && (t + 1) % width == 0) starpu_task_wait_for_all();
    }
    starpu_task_wait_for_all();
    /* A reduction is folded when its data is next used: inside the timing, as ours is. */
    if (mode == MODE_REDUX)
        for (int64_t b = 0; b < blocks; b++) {
            if (starpu_data_acquire(h[b], STARPU_R) != 0) FAIL("starpu_data_acquire");
            starpu_data_release(h[b]);
        }
    double t1 = now();
    for (int64_t b = 0; b < blocks; b++) starpu_data_unregister(h[b]);
    free(h);
    starpu_shutdown();
    return t1 - t0;
}

/* The graph with its dependences. */
double taskpools_dataflow_graph(uint64_t *d, int64_t blocks, int64_t n, const int32_t *out,
                                const int32_t *reads, const int32_t *nreads, int32_t threads,
                                int32_t pin) {
    return graph(d, blocks, n, 0, out, reads, nreads, threads, pin, MODE_RW);
}

/* The same tasks, a wait for all after every row of `width` (their dependences within a row
 * are none, so StarPU derives none). */
double taskpools_dataflow_rows(uint64_t *d, int64_t blocks, int64_t n, int64_t width,
                               const int32_t *out, const int32_t *reads, const int32_t *nreads,
                               int32_t threads, int32_t pin) {
    return graph(d, blocks, n, width, out, reads, nreads, threads, pin, MODE_RW);
}

/* The accumulate graph (no reads) with its written blocks STARPU_RW | STARPU_COMMUTE: the
 * additions into a block run one at a time, in any order. */
double taskpools_dataflow_commute(uint64_t *d, int64_t blocks, int64_t n, const int32_t *out,
                                  int32_t threads, int32_t pin) {
    int32_t *nreads = calloc((size_t)n, sizeof *nreads);
    if (!nreads) FAIL("calloc");
    double secs = graph(d, blocks, n, 0, out, NULL, nreads, threads, pin, MODE_COMMUTE);
    free(nreads);
    return secs;
}

/* The accumulate graph with its written blocks STARPU_REDUX. */
double taskpools_dataflow_reduce(uint64_t *d, int64_t blocks, int64_t n, const int32_t *out,
                                 int32_t threads, int32_t pin) {
    int32_t *nreads = calloc((size_t)n, sizeof *nreads);
    if (!nreads) FAIL("calloc");
    double secs = graph(d, blocks, n, 0, out, NULL, nreads, threads, pin, MODE_REDUX);
    free(nreads);
    return secs;
}

/* ---- Tiled factorizations: one handle per bs x bs tile of the row-major matrix. ---- */
typedef void (*t1_kernel)(double *a, int64_t bs, int64_t ld);
typedef void (*t2_kernel)(const double *a, double *b, int64_t bs, int64_t ld);
typedef void (*t3_kernel)(const double *a, const double *b, double *c, int64_t bs, int64_t ld);

/* The kernels and the tile shape of the running factorization (one per process at a time). */
static struct {
    t1_kernel k1;
    t2_kernel k2a, k2b;
    t3_kernel k3;
    int64_t bs;
} K;

#define TP(i) ((double *)STARPU_MATRIX_GET_PTR(buffers[i]))
#define LD(i) ((int64_t)STARPU_MATRIX_GET_LD(buffers[i]))

static void k1_cpu(void *buffers[], void *arg) {
    (void)arg;
    K.k1(TP(0), K.bs, LD(0));
}
static void k2a_cpu(void *buffers[], void *arg) {
    (void)arg;
    K.k2a(TP(0), TP(1), K.bs, LD(0));
}
static void k2b_cpu(void *buffers[], void *arg) {
    (void)arg;
    K.k2b(TP(0), TP(1), K.bs, LD(0));
}
static void k3_cpu(void *buffers[], void *arg) {
    (void)arg;
    K.k3(TP(0), TP(1), TP(2), K.bs, LD(0));
}

static struct starpu_codelet k1_cl = {.cpu_funcs = {k1_cpu}, .nbuffers = 1, .modes = {STARPU_RW}};
static struct starpu_codelet k2a_cl = {
    .cpu_funcs = {k2a_cpu}, .nbuffers = 2, .modes = {STARPU_R, STARPU_RW}};
static struct starpu_codelet k2b_cl = {
    .cpu_funcs = {k2b_cpu}, .nbuffers = 2, .modes = {STARPU_R, STARPU_RW}};
static struct starpu_codelet k3_cl = {
    .cpu_funcs = {k3_cpu}, .nbuffers = 3, .modes = {STARPU_R, STARPU_R, STARPU_RW}};

#define INSERT(...)                                          \
    do {                                                     \
        if (starpu_task_insert(__VA_ARGS__, 0) != 0) FAIL("starpu_task_insert"); \
    } while (0)

static double tiled(int lu, double *a, int64_t n, int64_t ld, int64_t bs, t1_kernel k1,
                    t2_kernel k2a, t2_kernel k2b, t3_kernel k3, int32_t threads, int32_t pin) {
    int64_t nt = n / bs;
    K.k1 = k1, K.k2a = k2a, K.k2b = k2b, K.k3 = k3, K.bs = bs;
    if (start(threads, pin) != 0) FAIL("starpu_init");
    starpu_data_handle_t *h = malloc((size_t)(nt * nt) * sizeof *h);
    if (!h) FAIL("malloc");
#define H(i, j) h[(i) * nt + (j)]
    for (int64_t i = 0; i < nt; i++)
        for (int64_t j = 0; j < nt; j++)
            starpu_matrix_data_register(&H(i, j), STARPU_MAIN_RAM,
                                        (uintptr_t)(a + i * bs * ld + j * bs), (uint32_t)ld,
                                        (uint32_t)bs, (uint32_t)bs, sizeof(double));
    double t0 = now();
    for (int64_t k = 0; k < nt; k++) {
        INSERT(&k1_cl, STARPU_RW, H(k, k));
        if (!lu) {
            /* Cholesky (lower): trsm on the column, then syrk on the diagonal and gemm
             * (C -= A B^T) below it. */
            for (int64_t i = k + 1; i < nt; i++) INSERT(&k2a_cl, STARPU_R, H(k, k), STARPU_RW, H(i, k));
            for (int64_t i = k + 1; i < nt; i++) {
                INSERT(&k2b_cl, STARPU_R, H(i, k), STARPU_RW, H(i, i));
                for (int64_t j = k + 1; j < i; j++)
                    INSERT(&k3_cl, STARPU_R, H(i, k), STARPU_R, H(j, k), STARPU_RW, H(i, j));
            }
        } else {
            /* LU without pivoting: trsm of the row and of the column, then gemm (C -= A B). */
            for (int64_t j = k + 1; j < nt; j++) INSERT(&k2a_cl, STARPU_R, H(k, k), STARPU_RW, H(k, j));
            for (int64_t i = k + 1; i < nt; i++) INSERT(&k2b_cl, STARPU_R, H(k, k), STARPU_RW, H(i, k));
            for (int64_t i = k + 1; i < nt; i++)
                for (int64_t j = k + 1; j < nt; j++)
                    INSERT(&k3_cl, STARPU_R, H(i, k), STARPU_R, H(k, j), STARPU_RW, H(i, j));
        }
    }
    starpu_task_wait_for_all();
    double t1 = now();
    for (int64_t i = 0; i < nt * nt; i++) starpu_data_unregister(h[i]);
#undef H
    free(h);
    starpu_shutdown();
    return t1 - t0;
}

double taskpools_suite_cholesky(double *a, int64_t n, int64_t ld, int64_t bs, t1_kernel potrf,
                                t2_kernel trsm, t2_kernel syrk, t3_kernel gemm, int32_t threads,
                                int32_t pin) {
    return tiled(0, a, n, ld, bs, potrf, trsm, syrk, gemm, threads, pin);
}

double taskpools_suite_lu(double *a, int64_t n, int64_t ld, int64_t bs, t1_kernel getrf,
                          t2_kernel trsm_l, t2_kernel trsm_u, t3_kernel gemm, int32_t threads,
                          int32_t pin) {
    return tiled(1, a, n, ld, bs, getrf, trsm_l, trsm_u, gemm, threads, pin);
}

/* ---- Heat: bands of rows of two arrays swapped each step; a band of the next step reads
 * the band above, its own and the band below of the previous one. One vector handle per
 * band (ordering only: the kernel reads the rows around its band through the arrays). ---- */
typedef void (*heat_kernel)(const double *src, int64_t src_row0, int64_t src_rows, double *dst,
                            int64_t dst_row0, int64_t dst_rows, int64_t n);

struct heat_task {
    const double *src;
    double *dst;
    int64_t s0, s1, r0, r1, n;
    heat_kernel k;
};

static void heat_cpu(void *buffers[], void *arg) {
    (void)buffers;
    struct heat_task x;
    starpu_codelet_unpack_args(arg, &x);
    x.k(x.src + x.s0 * x.n, x.s0, x.s1 - x.s0, x.dst + x.r0 * x.n, x.r0, x.r1 - x.r0, x.n);
}

static struct starpu_codelet heat_cl = {
    .cpu_funcs = {heat_cpu}, .nbuffers = 4, .modes = {STARPU_R, STARPU_R, STARPU_R, STARPU_W}};

double taskpools_suite_heat(double *a, double *b, int64_t n, int64_t steps, int64_t band,
                            heat_kernel k, int32_t threads, int32_t pin) {
    int64_t nb = (n + band - 1) / band;
    if (start(threads, pin) != 0) FAIL("starpu_init");
    starpu_data_handle_t *ha = malloc((size_t)nb * sizeof *ha), *hb = malloc((size_t)nb * sizeof *hb);
    if (!ha || !hb) FAIL("malloc");
    for (int64_t i = 0; i < nb; i++) {
        int64_t rows = (i + 1) * band < n ? band : n - i * band;
        starpu_vector_data_register(&ha[i], STARPU_MAIN_RAM, (uintptr_t)(a + i * band * n),
                                    (uint32_t)(rows * n), sizeof(double));
        starpu_vector_data_register(&hb[i], STARPU_MAIN_RAM, (uintptr_t)(b + i * band * n),
                                    (uint32_t)(rows * n), sizeof(double));
    }
    double t0 = now();
    for (int64_t s = 0; s < steps; s++) {
        double *src = s % 2 == 0 ? a : b, *dst = s % 2 == 0 ? b : a;
        starpu_data_handle_t *hs = s % 2 == 0 ? ha : hb, *hd = s % 2 == 0 ? hb : ha;
        for (int64_t i = 0; i < nb; i++) {
            int64_t r0 = i * band, r1 = r0 + band < n ? r0 + band : n;
            struct heat_task x = {src, dst, r0 > 0 ? r0 - 1 : 0, r1 < n ? r1 + 1 : n, r0, r1, n, k};
            int64_t up = i > 0 ? i - 1 : i, down = i + 1 < nb ? i + 1 : i;
            INSERT(&heat_cl, STARPU_VALUE, &x, sizeof x, STARPU_R, hs[up], STARPU_R, hs[i],
                   STARPU_R, hs[down], STARPU_W, hd[i]);
        }
    }
    starpu_task_wait_for_all();
    double t1 = now();
    for (int64_t i = 0; i < nb; i++) {
        starpu_data_unregister(ha[i]);
        starpu_data_unregister(hb[i]);
    }
    free(ha);
    free(hb);
    starpu_shutdown();
    return t1 - t0;
}

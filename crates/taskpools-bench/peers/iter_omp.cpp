// `taskpools iter`'s OpenMP peer, built with `clang++ -fopenmp=libomp` against LLVM's OpenMP
// runtime (libomp) and run in a process of its own (see iter_common.hpp for the command line,
// the output and the inputs; omp_team.hpp for the identity check that refuses libgomp). Every
// parallel region has exactly THREADS threads (`omp_set_num_threads`, dynamic adjustment off);
// with `--pin` the workbench's OMP_PLACES/OMP_PROC_BIND place them, else the runtime's
// defaults do. KMP_BLOCKTIME stays at libomp's default (200 ms of spinning after a region).
// Each kernel in the form OpenMP's documentation gives for its loop:
//   sum-squares      `parallel for reduction(+:s)`, static schedule (uniform iterations)
//   mandelbrot       `parallel for schedule(dynamic)` over the rows (rows through the set cost
//                    up to 256 times the others)
//   nbody            one `parallel` region, two `for` loops a step (static; the implied
//                    barriers order the accelerations before the update)
//   wordfreq         `parallel` region, a map per thread over a static `for` on 64 KiB blocks
//                    of the text, merged in a `critical` section
//   sort-u64,        OpenMP has no sort and no loop form of one: a mergesort with `task` for
//   sort-strings     one half and `taskwait` (leaves std::sort, merges sequential)
//   filter-collect,  `parallel` region: each thread collects its contiguous part of a static
//   flat-map         `for` (static hands them out in thread order), then copies it to its
//                    offset after a prefix sum of the parts' lengths
#include "iter_common.hpp"
#include "omp_team.hpp"

using iter::Vec;


template <class T>
void mergesort(T *v, T *buf, size_t n, size_t leaf) {
  if (n <= leaf) {
    std::sort(v, v + n);
    return;
  }
  size_t mid = n / 2;
#pragma omp task default(shared)
  mergesort(v, buf, mid, leaf);
  mergesort(v + mid, buf + mid, n - mid, leaf);
#pragma omp taskwait
  std::merge(std::make_move_iterator(v), std::make_move_iterator(v + mid),
             std::make_move_iterator(v + mid), std::make_move_iterator(v + n), buf);
  std::move(buf, buf + n, v);
}

struct Omp {
  explicit Omp(const iter::Args &a) {
    peer::omp_fixed_team(a.threads, a.pin);
    omp_set_num_threads((int)a.threads);
  }
  template <class F>
  void par(F &&f) {
    f();
  }

  static const char *construct(const std::string &k) {
    if (k == "sum-squares") return "libomp for reduction";
    if (k == "mandelbrot") return "libomp for dynamic";
    if (k == "sort-u64" || k == "sort-strings") return "libomp tasks";
    return "libomp for";
  }

  static uint64_t sum_squares(const std::vector<uint64_t> &v) {
    uint64_t s = 0;
    size_t n = v.size();
    const uint64_t *p = v.data();
#pragma omp parallel for reduction(+ : s) schedule(static)
    for (size_t i = 0; i < n; i++) s += p[i] * p[i];
    return s;
  }

  static Vec<uint32_t> mandelbrot(size_t side) {
    Vec<uint32_t> img(side * side);
#pragma omp parallel for schedule(dynamic)
    for (size_t y = 0; y < side; y++) iter::mandel_row(y, side, &img[y * side]);
    return img;
  }

  static void nbody(std::vector<iter::Body> &b) {
    size_t n = b.size();
    std::vector<double> acc(3 * n);
#pragma omp parallel
    for (size_t s = 0; s < iter::NBODY_STEPS; s++) {
#pragma omp for schedule(static)
      for (size_t i = 0; i < n; i++) iter::accel(i, b.data(), n, &acc[3 * i]);
#pragma omp for schedule(static)
      for (size_t i = 0; i < n; i++) iter::update(b[i], &acc[3 * i]);
    }
  }

  static iter::Counts wordfreq(const std::string &text) {
    std::string_view t(text);
    const size_t block = 1 << 16;
    size_t blocks = (t.size() + block - 1) / block;
    iter::Counts all;
#pragma omp parallel
    {
      iter::Counts local;
#pragma omp for schedule(static)
      for (size_t i = 0; i < blocks; i++)
        iter::count_words(t, i * block, std::min(t.size(), (i + 1) * block), local);
#pragma omp critical
      iter::merge_counts(all, local);
    }
    return all;
  }

  template <class T>
  static void sort(std::vector<T> &v) {
    size_t n = v.size();
    std::vector<T> buf(n);
    // Leaves of an eighth of a thread's share (at least 2048 elements): enough tasks to
    // balance, few enough that a task's cost stays negligible.
    size_t leaf = std::max<size_t>(2048, n / (8 * (size_t)omp_get_max_threads()));
#pragma omp parallel
#pragma omp single
    mergesort(v.data(), buf.data(), n, leaf);
  }

  // The kept or mapped elements of [0, n) in order: `body(i, out)` appends element i's.
  template <class T, class F>
  static Vec<T> collect(size_t n, F body) {
    Vec<T> out;
    std::vector<size_t> start;
#pragma omp parallel
    {
      Vec<T> local;
#pragma omp for schedule(static)
      for (size_t i = 0; i < n; i++) body(i, local);
#pragma omp single
      start.assign((size_t)omp_get_num_threads() + 1, 0);
      size_t me = (size_t)omp_get_thread_num();
      start[me + 1] = local.size();
#pragma omp barrier
#pragma omp single
      {
        for (size_t t = 1; t < start.size(); t++) start[t] += start[t - 1];
        out.resize(start.back());
      }
      std::copy(local.begin(), local.end(), out.begin() + (ptrdiff_t)start[me]);
    }
    return out;
  }
};

int main(int argc, char **argv) {
  // The whole set of cores, before the runtime starts: libomp takes its view of the machine
  // from the initial thread's mask.
  peer::set_affinity(peer::cores());
  return iter::main<Omp>(argc, argv, peer::omp_identity());
}

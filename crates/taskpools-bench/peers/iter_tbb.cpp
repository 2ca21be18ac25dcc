// `taskpools iter`'s oneTBB peer (see iter_common.hpp for the command line, the output and the
// inputs): each iterator kernel written with oneTBB's own algorithms, inside a
// `tbb::task_arena` of exactly THREADS threads (tbb_arena.hpp; `--pin` pins its threads as
// the workbench pins its workers). Every algorithm runs with its defaults, as oneTBB's
// documentation recommends: `blocked_range` with grain size 1 and the `auto_partitioner`,
// which splits on demand as threads steal.
//   sum-squares      `parallel_reduce` (functional form: a range's sum, then `std::plus`)
//   mandelbrot       `parallel_for` over the rows
//   nbody            `parallel_for` over the bodies, twice a step (accelerations, then update)
//   wordfreq         `parallel_for` over the text's bytes, a map per thread in an
//                    `enumerable_thread_specific`, combined after (a word counts in the piece
//                    where it starts)
//   sort-u64,        `parallel_sort` (oneTBB's parallel quicksort)
//   sort-strings
//   filter-collect,  `parallel_reduce` collecting into vectors, joined in order (the reduction
//   flat-map         need not commute; oneTBB joins a left piece with its right neighbour)
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/enumerable_thread_specific.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_reduce.h>
#include <oneapi/tbb/parallel_sort.h>

#include "iter_common.hpp"
#include "tbb_arena.hpp"

using iter::Vec;
using Range = tbb::blocked_range<size_t>;


struct Tbb {
  peer::FixedArena arena;
  explicit Tbb(const iter::Args &a) : arena(a.threads, a.pin, peer::cores()) {}
  template <class F>
  void par(F &&f) {
    arena.execute(f);
  }

  static const char *construct(const std::string &k) {
    if (k == "sum-squares" || k == "filter-collect" || k == "flat-map")
      return "tbb parallel_reduce";
    if (k == "wordfreq") return "tbb parallel_for+ets";
    if (k == "sort-u64" || k == "sort-strings") return "tbb parallel_sort";
    return "tbb parallel_for";
  }

  static uint64_t sum_squares(const std::vector<uint64_t> &v) {
    return tbb::parallel_reduce(
        Range(0, v.size()), uint64_t(0),
        [&](const Range &r, uint64_t s) {
          for (size_t i = r.begin(); i != r.end(); i++) s += v[i] * v[i];
          return s;
        },
        std::plus<uint64_t>());
  }

  static Vec<uint32_t> mandelbrot(size_t side) {
    Vec<uint32_t> img(side * side);
    tbb::parallel_for(Range(0, side), [&](const Range &r) {
      for (size_t y = r.begin(); y != r.end(); y++) iter::mandel_row(y, side, &img[y * side]);
    });
    return img;
  }

  static void nbody(std::vector<iter::Body> &b) {
    size_t n = b.size();
    std::vector<double> acc(3 * n);
    for (size_t s = 0; s < iter::NBODY_STEPS; s++) {
      tbb::parallel_for(Range(0, n), [&](const Range &r) {
        for (size_t i = r.begin(); i != r.end(); i++) iter::accel(i, b.data(), n, &acc[3 * i]);
      });
      tbb::parallel_for(Range(0, n), [&](const Range &r) {
        for (size_t i = r.begin(); i != r.end(); i++) iter::update(b[i], &acc[3 * i]);
      });
    }
  }

  static iter::Counts wordfreq(const std::string &text) {
    std::string_view t(text);
    tbb::enumerable_thread_specific<iter::Counts> local;
    tbb::parallel_for(Range(0, t.size()), [&](const Range &r) {
      iter::count_words(t, r.begin(), r.end(), local.local());
    });
    iter::Counts all;
    local.combine_each([&](const iter::Counts &m) {
      if (all.empty())
        all = m;
      else
        iter::merge_counts(all, m);
    });
    return all;
  }

  template <class T>
  static void sort(std::vector<T> &v) {
    tbb::parallel_sort(v.begin(), v.end());
  }

  // The kept or mapped elements of [0, n) in order: `body(i, out)` appends element i's.
  template <class T, class F>
  static Vec<T> collect(size_t n, F body) {
    return tbb::parallel_reduce(
        Range(0, n), Vec<T>(),
        [&](const Range &r, Vec<T> acc) {
          for (size_t i = r.begin(); i != r.end(); i++) body(i, acc);
          return acc;
        },
        [](Vec<T> a, Vec<T> b) {
          if (a.empty()) return b;
          a.insert(a.end(), b.begin(), b.end());
          return a;
        });
  }
};

int main(int argc, char **argv) {
  // The whole set of cores before oneTBB starts: it sizes its thread pool from the initial
  // thread's mask.
  peer::set_affinity(peer::cores());
  return iter::main<Tbb>(argc, argv, peer::tbb_identity());
}

// `taskpools queens`'s oneTBB peer: N-Queens counted with `tbb::task_group`, one task per
// child of a node (the decomposition of the workbench's `scope` front end), and the same
// with a depth cutoff (tasks for the first D rows, the sequential recursion below: the
// cutoff oneTBB's documentation recommends for recursive parallelism, a serial base case
// below a grain). The board is the workbench's: a bit mask of the columns and the two
// diagonals that the queens placed so far attack in the next row (queens/mod.rs), so the
// count is checked exactly against the sequential Rust search.
//
// Command line: `queens_tbb queens THREADS REPS N PIN [VARIANT]`, VARIANT `scope` (the
// default) or `scope-cutoff-D` (D = 1 to N). Output, as the other peer programs
// (forkjoin_common.hpp): `runtime oneTBB VERSION PATH`, then one untimed run and REPS lines
// `time SECONDS result SOLUTIONS`. The kernels run inside a `tbb::task_arena` of exactly
// THREADS threads, pinned as the workbench pins its workers (tbb_arena.hpp).
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <oneapi/tbb/task_group.h>

#include "peer_util.hpp"
#include "tbb_arena.hpp"

namespace {

struct Board {
  uint32_t all, cols, left, right;
  bool solved() const { return cols == all; }
  uint32_t free() const { return ~(cols | left | right) & all; }
  Board place(uint32_t q) const {
    return Board{all, cols | q, ((left | q) << 1) & all, (right | q) >> 1};
  }
};

// The board's four words as four arguments, not one struct: passed as a struct, clang++ -O2
// left this recursion 15 % slower than the Rust one (33.4 against 28.8 ms, n = 13, 1 thread);
// as words it runs at the Rust one's speed.
uint64_t sequential_words(uint32_t all, uint32_t cols, uint32_t left, uint32_t right) {
  if (cols == all) return 1;
  uint64_t n = 0;
  for (uint32_t f = ~(cols | left | right) & all; f != 0; f &= f - 1) {
    uint32_t q = f & (~f + 1);
    n += sequential_words(all, cols | q, ((left | q) << 1) & all, (right | q) >> 1);
  }
  return n;
}

uint64_t sequential(Board b) { return sequential_words(b.all, b.cols, b.left, b.right); }

// Solutions below `b`: a task per child down to `depth` more rows (negative: no limit).
uint64_t per_node(Board b, int depth) {
  if (b.solved()) return 1;
  if (depth == 0) return sequential(b);
  uint64_t counts[32] = {0};
  tbb::task_group g;
  int i = 0;
  for (uint32_t f = b.free(); f != 0; f &= f - 1) {
    Board c = b.place(f & (~f + 1));
    uint64_t *slot = &counts[i++];
    g.run([c, slot, depth] { *slot = per_node(c, depth < 0 ? -1 : depth - 1); });
  }
  g.wait();
  uint64_t n = 0;
  for (int j = 0; j < i; j++) n += counts[j];
  return n;
}

[[noreturn]] void usage(const std::string &why) {
  peer::fail("queens_tbb: " + why +
             " (usage: queens_tbb queens THREADS REPS N PIN [scope|scope-cutoff-D])");
}

unsigned number(const char *what, const char *s, unsigned lo, unsigned hi) {
  char *end;
  unsigned long v = std::strtoul(s, &end, 10);
  if (end == s || *end || v < lo || v > hi)
    usage(std::string(what) + " must be " + std::to_string(lo) + " to " + std::to_string(hi));
  return (unsigned)v;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 6 && argc != 7) usage("expected 5 or 6 arguments");
  if (std::string(argv[1]) != "queens") usage("unknown kernel '" + std::string(argv[1]) + "'");
  unsigned threads = number("THREADS", argv[2], 1, 4096);
  unsigned reps = number("REPS", argv[3], 1, 1000000);
  unsigned n = number("N", argv[4], 4, 16);
  std::string pin = argv[5];
  if (pin != "0" && pin != "1") usage("PIN must be 0 or 1");
  std::string variant = argc == 7 ? argv[6] : "scope";
  int depth = -1;
  const std::string cut = "scope-cutoff-";
  if (variant.compare(0, cut.size(), cut) == 0)
    depth = (int)number("the cutoff depth", variant.c_str() + cut.size(), 1, n);
  else if (variant != "scope")
    usage("unknown variant '" + variant + "' (known: scope, scope-cutoff-D)");
  std::vector<int> cores = peer::cores();
  // The whole set of cores before oneTBB starts: it sizes its thread pool from the initial
  // thread's mask. The observer then pins each thread, the caller (arena slot 0) included.
  peer::set_affinity(cores);
  std::printf("runtime %s\n", peer::tbb_identity().c_str());
  peer::FixedArena arena(threads, pin == "1", cores);
  Board root{(1u << n) - 1, 0, 0, 0};
  uint64_t count = 0;
  arena.execute([&] { count = per_node(root, depth); });
  for (unsigned r = 0; r < reps; r++) {
    double t0 = 0, t1 = 0;
    arena.execute([&] {
      t0 = peer::now();
      count = per_node(root, depth);
      t1 = peer::now();
    });
    std::printf("time %.9f result %" PRIu64 "\n", t1 - t0, count);
  }
  return 0;
}

// The fork-join kernels of `taskpools forkjoin` (crates/taskpools-bench/src/experiments/
// forkjoin/kernels.rs) for the peer runtimes that run in processes of their own (oneTBB,
// LLVM's OpenMP runtime): the same algorithms, cutoffs and inputs, the inputs regenerated
// exactly as the workbench makes them (tree.rs's LCG and breadth-first layout; fastrand's
// wyrand with the same seeds for the sort input and the matrices), so that every result can
// be compared with the workbench's sequential one.
//
// A peer program is `NAME KERNEL THREADS REPS SIZE PIN [VARIANT]`; it prints a first line
// `runtime NAME VERSION...` naming the runtime that actually ran, then one line per
// repetition, `time SECONDS result CHECKSUM`, after one untimed warm-up run. The time is
// taken inside the runtime, from the kernel's start to its end. Bad arguments: one line on
// stderr, exit status 2.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "peer_util.hpp"

namespace peer {

constexpr size_t SORT_CUTOFF = 2048;
constexpr size_t MM_CUTOFF = 32;

// A node of the tree-sum kernel's tree: `kids` points at a pair allocated on its own, as the
// workbench's `Box<(Node, Node)>`.
struct Node {
  uint64_t value;
  Node *kids;
};

// tree.rs's `build`: a complete binary tree allocated level by level, values from an LCG
// seeded with 1.
inline Node build_tree(uint32_t depth) {
  uint64_t next = 1;
  auto value = [&] {
    next = next * 6364136223846793005ULL + 1;
    return next >> 40;
  };
  Node root{value(), nullptr};
  std::vector<Node *> level{&root};
  for (uint32_t d = 0; d < depth; d++) {
    std::vector<Node *> below;
    below.reserve(level.size() * 2);
    for (Node *n : level) {
      Node *pair = static_cast<Node *>(std::malloc(2 * sizeof(Node)));
      if (!pair) {
        std::fprintf(stderr, "out of memory building the tree\n");
        std::exit(1);
      }
      pair[0] = Node{value(), nullptr};
      pair[1] = Node{value(), nullptr};
      n->kids = pair;
      below.push_back(&pair[0]);
      below.push_back(&pair[1]);
    }
    level.swap(below);
  }
  return root;
}

// fastrand 2.5's `Rng` (wyrand): `u32(..)` and `f64()`.
struct Wyrand {
  uint64_t s;
  uint64_t next() {
    s += 0x2d358dccaa6c78a5ULL;
    unsigned __int128 t = (unsigned __int128)s * (unsigned __int128)(s ^ 0x8bb84b93962eacc9ULL);
    return (uint64_t)t ^ (uint64_t)(t >> 64);
  }
  uint32_t u32() { return (uint32_t)next(); }
  double f64() {
    for (;;) {
      double x = (double)(next() >> 1) * (1.0 / (double)(1ULL << 63));
      if (x < 1.0) return x;
    }
  }
};

// The checksum the workbench compares: FNV-1a over 64-bit words.
struct Hash {
  uint64_t h = 0xcbf29ce484222325ULL;
  void word(uint64_t w) {
    h ^= w;
    h *= 0x100000001b3ULL;
  }
};
inline uint64_t hash_u32(const uint32_t *v, size_t n) {
  Hash h;
  for (size_t i = 0; i < n; i++) h.word(v[i]);
  return h.h;
}
inline uint64_t hash_f64(const double *v, size_t n) {
  Hash h;
  for (size_t i = 0; i < n; i++) {
    uint64_t w;
    std::memcpy(&w, &v[i], 8);
    h.word(w);
  }
  return h.h;
}

// The sequential parts, not inlined (as in kernels.rs, so every fork runs the same code
// between its forks).
__attribute__((noinline)) inline void sort_leaf(uint32_t *v, size_t n) { std::sort(v, v + n); }

__attribute__((noinline)) inline void merge(uint32_t *v, uint32_t *buf, size_t n, size_t mid) {
  size_t i = 0, k = mid;
  for (size_t o = 0; o < n; o++) {
    if (k >= n || (i < mid && v[i] <= v[k])) {
      buf[o] = v[i++];
    } else {
      buf[o] = v[k++];
    }
  }
  std::memcpy(v, buf, n * sizeof(uint32_t));
}

// Median-of-three pivot, Lomuto partition; returns the pivot's final index.
__attribute__((noinline)) inline size_t partition(uint32_t *v, size_t n) {
  uint32_t a = v[0], b = v[n / 2], c = v[n - 1];
  uint32_t pivot = std::min(std::max(a, b), std::max(std::min(a, b), c));
  size_t last = n - 1;
  size_t pi = pivot == a ? 0 : pivot == b ? n / 2 : last;
  std::swap(v[pi], v[last]);
  size_t store = 0;
  for (size_t i = 0; i < last; i++) {
    if (v[i] < pivot) {
      std::swap(v[i], v[store]);
      store++;
    }
  }
  std::swap(v[store], v[last]);
  return store;
}

struct Block {
  double *ptr;
  size_t stride;
  size_t n;
  Block quadrant(size_t r, size_t c) const {
    size_t h = n / 2;
    return Block{ptr + r * h * stride + c * h, stride, h};
  }
};

__attribute__((noinline)) inline void matmul_leaf(Block c, Block a, Block b) {
  size_t n = c.n;
  for (size_t i = 0; i < n; i++) {
    for (size_t k = 0; k < n; k++) {
      double aik = a.ptr[i * a.stride + k];
      for (size_t x = 0; x < n; x++) c.ptr[i * c.stride + x] += aik * b.ptr[k * b.stride + x];
    }
  }
}

// The five kernels with `J::join(a, b)` as the fork.
template <class J>
struct Kernels {
  static uint64_t fib(uint64_t n) {
    if (n < 2) return n;
    uint64_t a, b;
    J::join([&] { a = fib(n - 1); }, [&] { b = fib(n - 2); });
    return a + b;
  }
  static uint64_t tree_sum(const Node *n) {
    if (!n->kids) return n->value;
    uint64_t a, b;
    const Node *k = n->kids;
    J::join([&] { a = tree_sum(&k[0]); }, [&] { b = tree_sum(&k[1]); });
    return n->value + a + b;
  }
  static void mergesort(uint32_t *v, uint32_t *buf, size_t n) {
    if (n <= SORT_CUTOFF) {
      sort_leaf(v, n);
      return;
    }
    size_t mid = n / 2;
    J::join([&] { mergesort(v, buf, mid); }, [&] { mergesort(v + mid, buf + mid, n - mid); });
    merge(v, buf, n, mid);
  }
  static void quicksort(uint32_t *v, size_t n) {
    if (n <= SORT_CUTOFF) {
      sort_leaf(v, n);
      return;
    }
    size_t store = partition(v, n);
    J::join([&] { quicksort(v, store); }, [&] { quicksort(v + store + 1, n - store - 1); });
  }
  // C += A·B, 8-way: the four products into distinct quadrants of C in parallel, twice.
  static void matmul(Block c, Block a, Block b) {
    if (c.n <= MM_CUTOFF) {
      matmul_leaf(c, a, b);
      return;
    }
    for (size_t t = 0; t < 2; t++) {
      J::join(
          [&] {
            J::join([&] { matmul(c.quadrant(0, 0), a.quadrant(0, t), b.quadrant(t, 0)); },
                    [&] { matmul(c.quadrant(0, 1), a.quadrant(0, t), b.quadrant(t, 1)); });
          },
          [&] {
            J::join([&] { matmul(c.quadrant(1, 0), a.quadrant(1, t), b.quadrant(t, 0)); },
                    [&] { matmul(c.quadrant(1, 1), a.quadrant(1, t), b.quadrant(t, 1)); });
          });
    }
  }
};

[[noreturn]] inline void usage_error(const char *prog, const std::string &why) {
  std::fprintf(stderr, "%s: %s (usage: %s KERNEL THREADS REPS SIZE PIN(0|1) [VARIANT])\n", prog,
               why.c_str(), prog);
  std::exit(2);
}

inline uint64_t parse_u64(const char *prog, const char *what, const char *s, uint64_t max) {
  char *end = nullptr;
  errno = 0;
  if (!*s || *s == '-') usage_error(prog, std::string(what) + " '" + s + "' is not a number");
  unsigned long long v = std::strtoull(s, &end, 10);
  if (errno || *end) usage_error(prog, std::string(what) + " '" + s + "' is not a number");
  if (v > max)
    usage_error(prog, std::string(what) + " " + s + " is larger than " + std::to_string(max));
  return v;
}

struct Args {
  std::string kernel;
  unsigned threads;
  unsigned reps;
  uint64_t size;
  bool pin;
  std::string variant;
};

// Checks the command line; `variants` lists the accepted VARIANT values, the first the default.
inline Args parse_args(int argc, char **argv, const std::vector<std::string> &variants) {
  const char *prog = argc > 0 ? argv[0] : "peer";
  if (const char *s = std::strrchr(prog, '/')) prog = s + 1;
  if (argc != 6 && argc != 7) usage_error(prog, "expected 5 or 6 arguments");
  Args a;
  a.kernel = argv[1];
  const char *known[] = {"fib", "tree-sum", "mergesort", "quicksort", "matmul"};
  if (std::find_if(std::begin(known), std::end(known),
                   [&](const char *k) { return a.kernel == k; }) == std::end(known))
    usage_error(prog, "unknown kernel '" + a.kernel +
                          "' (known: fib, tree-sum, mergesort, quicksort, matmul)");
  a.threads = (unsigned)parse_u64(prog, "THREADS", argv[2], 4096);
  a.reps = (unsigned)parse_u64(prog, "REPS", argv[3], 1000000);
  if (a.threads == 0 || a.reps == 0) usage_error(prog, "THREADS and REPS must be at least 1");
  uint64_t max = a.kernel == "fib"        ? 45
                 : a.kernel == "tree-sum" ? 25
                 : a.kernel == "matmul"   ? 2048
                                          : (1ULL << 28);
  a.size = parse_u64(prog, "SIZE", argv[4], max);
  if (a.kernel == "matmul" && (a.size == 0 || (a.size & (a.size - 1))))
    usage_error(prog, "SIZE of matmul must be a power of two");
  std::string pin = argv[5];
  if (pin != "0" && pin != "1") usage_error(prog, "PIN must be 0 or 1");
  a.pin = pin == "1";
  a.variant = argc == 7 ? argv[6] : variants[0];
  if (std::find(variants.begin(), variants.end(), a.variant) == variants.end()) {
    std::string v;
    for (auto &x : variants) v += (v.empty() ? "" : ", ") + x;
    usage_error(prog, "unknown variant '" + a.variant + "' (known: " + v + ")");
  }
  return a;
}

// Runs `a.kernel` once untimed, then `a.reps` times, each timed inside the runtime:
// `par(f)` runs `f` on the runtime's `a.threads` threads (its caller participating).
template <class J, class Par>
int run(const Args &a, Par par) {
  using K = Kernels<J>;
  double t = 0;
  uint64_t result = 0;
  auto report = [&](bool timed) {
    if (timed) std::printf("time %.9f result %" PRIu64 "\n", t, result);
  };
  if (a.kernel == "fib") {
    for (unsigned r = 0; r <= a.reps; r++) {
      par([&] {
        double t0 = now();
        result = K::fib(a.size);
        t = now() - t0;
      });
      report(r > 0);
    }
  } else if (a.kernel == "tree-sum") {
    Node root = build_tree((uint32_t)a.size);
    for (unsigned r = 0; r <= a.reps; r++) {
      par([&] {
        double t0 = now();
        result = K::tree_sum(&root);
        t = now() - t0;
      });
      report(r > 0);
    }
  } else if (a.kernel == "mergesort" || a.kernel == "quicksort") {
    Wyrand rng{42};
    std::vector<uint32_t> input(a.size), v(a.size), buf(a.size);
    for (auto &x : input) x = rng.u32();
    bool merge = a.kernel == "mergesort";
    for (unsigned r = 0; r <= a.reps; r++) {
      std::copy(input.begin(), input.end(), v.begin());
      par([&] {
        double t0 = now();
        if (merge)
          K::mergesort(v.data(), buf.data(), v.size());
        else
          K::quicksort(v.data(), v.size());
        t = now() - t0;
      });
      result = hash_u32(v.data(), v.size());
      report(r > 0);
    }
  } else {
    size_t n = a.size;
    Wyrand rng{43};
    std::vector<double> ma(n * n), mb(n * n), mc(n * n);
    for (auto &x : ma) x = rng.f64() - 0.5;
    for (auto &x : mb) x = rng.f64() - 0.5;
    Block va{ma.data(), n, n}, vb{mb.data(), n, n}, vc{mc.data(), n, n};
    for (unsigned r = 0; r <= a.reps; r++) {
      std::fill(mc.begin(), mc.end(), 0.0);
      par([&] {
        double t0 = now();
        K::matmul(vc, va, vb);
        t = now() - t0;
      });
      result = hash_f64(mc.data(), mc.size());
      report(r > 0);
    }
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace peer

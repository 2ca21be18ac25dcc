// The kernels of `taskpools iter` (crates/taskpools-bench/iter-kernels/src/kernels.rs) for the
// peer runtimes that run in processes of their own (oneTBB: iter_tbb.cpp; LLVM's OpenMP
// runtime: iter_omp.cpp): the inputs regenerated exactly as kernels.rs makes them (its
// xorshift64* generator, seeded with size ^ 0x5EED), the same sequential pieces (a Mandelbrot
// row, an n-body acceleration and update, in the same floating-point order), the same checks
// and the same checksums, so that every checksum equals the sequential Rust loop's bit for bit.
//
// A peer program speaks the kernel program's protocol (iter-kernels/src/main.rs):
//   PROGRAM --info
//   PROGRAM KERNEL --threads N --scale F --runs R [--warmup W] [--pin]
// `--info` prints `{"identity":"…"}`, the runtime that actually runs (oneTBB's version and
// library, or the library that defines the OpenMP entry points); a run builds the input (not
// timed), runs the kernel W times (1) untimed and R times timed, and prints one line of JSON:
// `{"kernel","identity","runtime","threads","size","times_s":[…],"checksum"}`, where `runtime`
// names the construct (e.g. `tbb parallel_reduce`). A wrong result or bad arguments: one line
// on stderr (`error: …`), exit status 1.
#pragma once

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "peer_util.hpp"

namespace iter {

constexpr size_t NBODY_STEPS = 10;
constexpr uint32_t MANDEL_MAX_ITER = 256;
const char *const KERNELS[] = {"sum-squares", "mandelbrot",   "nbody",          "wordfreq",
                               "sort-u64",    "sort-strings", "filter-collect", "flat-map"};

// A vector whose elements are left uninitialized on resize (as Rust's collect writes each
// element once): the collecting kernels' output.
template <class T>
struct DefaultInit : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = DefaultInit<U>;
  };
  DefaultInit() = default;
  template <class U>
  DefaultInit(const DefaultInit<U> &) {}
  template <class U>
  void construct(U *p) noexcept {
    ::new (static_cast<void *>(p)) U;
  }
  template <class U, class... A>
  void construct(U *p, A &&...a) {
    ::new (static_cast<void *>(p)) U(std::forward<A>(a)...);
  }
};
template <class T>
using Vec = std::vector<T, DefaultInit<T>>;

struct Body {
  double pos[3];
  double vel[3];
  double mass;
};

using Counts = std::unordered_map<std::string_view, size_t>;

[[noreturn]] inline void error(const std::string &why) { peer::fail("error: " + why); }

// kernels.rs's `Rng` (xorshift64*).
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ULL | 1) {}
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1DULL;
  }
  uint64_t below(uint64_t n) { return next() % n; }
  double unit() { return (double)(next() >> 11) / (double)(1ULL << 53); }
};

inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
inline uint64_t mix(uint64_t h, uint64_t x) { return rotl((h ^ x) * 0x1000000001B3ULL, 29); }
inline uint64_t hash64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDULL;
  x ^= x >> 33;
  x *= 0xC4CEB9FE1A85EC53ULL;
  return x ^ (x >> 33);
}
inline uint64_t hash_str(std::string_view s) {
  uint64_t h = 0xCBF29CE484222325ULL;
  for (unsigned char b : s) h = (h ^ b) * 0x100000001B3ULL;
  return h;
}
inline uint64_t bits(double v) {
  uint64_t w;
  std::memcpy(&w, &v, 8);
  return w;
}
constexpr uint64_t ORDERED_SEED = 0x84222325;

// The kernel's size at scale 1, and at `scale` (kernels.rs's `default_size` and `size_at`).
inline size_t default_size(const std::string &k) {
  if (k == "sum-squares" || k == "wordfreq") return 100000000;
  if (k == "mandelbrot") return 2048;
  if (k == "nbody") return 4096;
  if (k == "sort-strings") return 1000000;
  if (k == "sort-u64" || k == "filter-collect" || k == "flat-map") return 10000000;
  return 0;
}
inline size_t size_at(const std::string &k, double scale) {
  double d = (double)default_size(k);
  double s = (k == "mandelbrot" || k == "nbody") ? d * std::sqrt(scale) : d * scale;
  double min = k == "nbody" ? 2.0 : 1.0;
  return (size_t)std::max(std::round(s), min);
}

// The inputs, as kernels.rs's `input` builds them.
struct Input {
  std::vector<uint64_t> u64;                // sum-squares, sort-u64, filter-collect
  std::vector<Body> bodies;                 // nbody
  std::string text;                         // wordfreq
  size_t words = 0;                         // wordfreq
  std::vector<std::string> strings;         // sort-strings
  std::vector<std::vector<uint32_t>> ragged;  // flat-map
  size_t total = 0;                         // flat-map
};

inline std::string letters(Rng &rng, size_t len) {
  std::string s(len, ' ');
  for (auto &c : s) c = (char)('a' + rng.below(26));
  return s;
}

inline Input make_input(const std::string &k, size_t size) {
  Rng rng(size ^ 0x5EED);
  Input in;
  if (k == "sum-squares") {
    in.u64.resize(size);
    for (size_t i = 0; i < size; i++) in.u64[i] = i % 1024;
  } else if (k == "sort-u64" || k == "filter-collect") {
    in.u64.resize(size);
    for (auto &x : in.u64) x = rng.next();
  } else if (k == "nbody") {
    in.bodies.resize(size);
    for (auto &b : in.bodies) {
      for (auto &p : b.pos) p = rng.unit();
      for (auto &v : b.vel) v = 0.0;
      b.mass = 0.5 + rng.unit();
    }
  } else if (k == "wordfreq") {
    std::vector<std::string> vocab(20000);
    for (auto &w : vocab) {
      size_t len = 2 + rng.below(9);
      w = letters(rng, len);
    }
    in.text.reserve(size + 16);
    while (in.text.size() < size) {
      double u = rng.unit();
      const std::string &w = vocab[(size_t)((u * u) * (double)vocab.size())];
      if (in.text.size() + w.size() + 1 > size && !in.text.empty()) break;
      in.text += w;
      in.text += rng.below(12) == 0 ? '\n' : ' ';
      in.words++;
    }
  } else if (k == "sort-strings") {
    in.strings.resize(size);
    for (auto &s : in.strings) {
      size_t len = 4 + rng.below(17);
      s = letters(rng, len);
    }
  } else if (k == "flat-map") {
    while (in.total < size) {
      size_t len = rng.below(100) == 0 ? 200 : (size_t)rng.below(19);
      len = std::min(len, size - in.total);
      std::vector<uint32_t> v(len);
      for (auto &x : v) x = (uint32_t)rng.next();
      in.ragged.push_back(std::move(v));
      in.total += len;
    }
  }
  return in;
}

// The sequential pieces, in kernels.rs's floating-point order.
inline void mandel_row(size_t y, size_t side, uint32_t *row) {
  const double x0 = -2.0, y0 = -1.25, span = 2.5;
  double step = span / (double)side;
  double ci = y0 + (double)y * step;
  for (size_t x = 0; x < side; x++) {
    double cr = x0 + (double)x * step;
    double zr = 0.0, zi = 0.0;
    uint32_t n = 0;
    while (n < MANDEL_MAX_ITER && zr * zr + zi * zi <= 4.0) {
      double t = zr * zr - zi * zi + cr;
      zi = 2.0 * zr * zi + ci;
      zr = t;
      n++;
    }
    row[x] = n;
  }
}

inline void accel(size_t i, const Body *bodies, size_t n, double *a) {
  const double *p = bodies[i].pos;
  a[0] = a[1] = a[2] = 0.0;
  for (size_t j = 0; j < n; j++) {
    if (j == i) continue;
    const Body &b = bodies[j];
    double d[3] = {b.pos[0] - p[0], b.pos[1] - p[1], b.pos[2] - p[2]};
    double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + 1e-3;
    double f = b.mass / (r2 * std::sqrt(r2));
    a[0] += f * d[0];
    a[1] += f * d[1];
    a[2] += f * d[2];
  }
}

inline void update(Body &b, const double *a) {
  const double dt = 1e-4;
  for (int c = 0; c < 3; c++) {
    b.vel[c] += a[c] * dt;
    b.pos[c] += b.vel[c] * dt;
  }
}

inline bool space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// Counts the words of `text` that start in [begin, end) (a word that starts before `begin`
// belongs to the piece before; one that runs past `end` is counted whole here).
inline void count_words(std::string_view text, size_t begin, size_t end, Counts &m) {
  size_t i = begin;
  if (i > 0 && !space(text[i - 1]))
    while (i < end && !space(text[i])) i++;
  for (;;) {
    while (i < end && space(text[i])) i++;
    if (i >= end) return;
    size_t s = i;
    while (i < text.size() && !space(text[i])) i++;
    m[text.substr(s, i - s)]++;
  }
}

inline void merge_counts(Counts &into, const Counts &from) {
  for (auto &[w, c] : from) into[w] += c;
}

inline bool keep(uint64_t x) { return x % 3 == 0; }

// The checks and checksums (kernels.rs's `check_*` and `checksum_ordered`).
inline void check_sum_squares(size_t n64, uint64_t got) {
  auto sq = [](uint64_t k) { return k * (k - 1) * (2 * k - 1) / 6; };
  uint64_t n = n64;
  uint64_t want = (n / 1024) * sq(1024) + sq(n % 1024);
  if (got != want)
    error("sum-squares: sum " + std::to_string(got) + ", expected " + std::to_string(want));
}

template <class T, class Key>
uint64_t check_sorted(const std::vector<T> &input, const std::vector<T> &sorted, Key key) {
  for (size_t i = 1; i < sorted.size(); i++)
    if (sorted[i] < sorted[i - 1])
      error("sort: elements " + std::to_string(i - 1) + " and " + std::to_string(i) +
            " out of order");
  auto bag = [&](const std::vector<T> &s) {
    uint64_t h = 0;
    for (auto &x : s) h += hash64(key(x));
    return h;
  };
  if (sorted.size() != input.size() || bag(sorted) != bag(input))
    error("sort: the output is not a permutation of the input");
  uint64_t h = ORDERED_SEED;
  for (auto &x : sorted) h = mix(h, key(x));
  return h;
}

inline uint64_t check_wordfreq(const Counts &m, size_t words) {
  size_t total = 0;
  uint64_t h = 0;
  for (auto &[w, c] : m) {
    total += c;
    h += hash64(hash_str(w) ^ rotl((uint64_t)c, 32));
  }
  if (total != words)
    error("wordfreq: the counts add up to " + std::to_string(total) + ", the text has " +
          std::to_string(words) + " words");
  return h;
}

inline uint64_t check_filtered(const std::vector<uint64_t> &input, const Vec<uint64_t> &kept) {
  size_t j = 0;
  for (uint64_t x : input) {
    if (!keep(x)) continue;
    if (j >= kept.size() || kept[j] != x)
      error("filter-collect: an element is missing or out of order");
    j++;
  }
  if (j != kept.size()) error("filter-collect: elements that the filter drops were collected");
  uint64_t h = ORDERED_SEED;
  for (uint64_t x : kept) h = mix(h, x);
  return h;
}

struct Args {
  std::string kernel;
  unsigned threads = 1;
  double scale = 1.0;
  unsigned runs = 3;
  unsigned warmup = 1;
  bool pin = false;
  bool info = false;
};

inline Args parse_args(int argc, char **argv) {
  Args a;
  bool have_threads = false;
  auto number = [&](int &i, const char *name, double lo, double hi) {
    if (i + 1 >= argc) error(std::string(name) + " needs a value");
    const char *s = argv[++i];
    char *end = nullptr;
    double v = std::strtod(s, &end);
    if (!*s || *end || !(v >= lo && v <= hi))
      error(std::string(name) + " " + s + ": " + std::to_string((long long)lo) + " to " +
            std::to_string((long long)hi));
    return v;
  };
  for (int i = 1; i < argc; i++) {
    std::string s = argv[i];
    if (s == "--info") {
      a.info = true;
    } else if (s == "--threads") {
      double v = number(i, "--threads", 1, 4096);
      if (v != std::floor(v)) error("--threads: a whole number");
      a.threads = (unsigned)v;
      have_threads = true;
    } else if (s == "--scale") {
      if (i + 1 >= argc) error("--scale needs a value");
      char *end = nullptr;
      a.scale = std::strtod(argv[++i], &end);
      if (!*argv[i] || *end || !(a.scale > 0.0 && a.scale <= 4.0))
        error(std::string("--scale ") + argv[i] + ": more than 0, at most 4");
    } else if (s == "--runs") {
      a.runs = (unsigned)number(i, "--runs", 1, 1000);
    } else if (s == "--warmup") {
      a.warmup = (unsigned)number(i, "--warmup", 0, 1000);
    } else if (s == "--pin") {
      a.pin = true;
    } else if (!s.empty() && s[0] != '-' && a.kernel.empty()) {
      a.kernel = s;
    } else {
      error("unexpected argument " + s);
    }
  }
  if (a.info) return a;
  if (default_size(a.kernel) == 0) {
    std::string all;
    for (auto k : KERNELS) all += (all.empty() ? "" : ", ") + std::string(k);
    error("kernel \"" + a.kernel + "\": one of " + all);
  }
  if (!have_threads) error("--threads: give the thread count");
  return a;
}

// filter-collect and flat-map on a peer's `P::collect<T>(n, body)`, which returns in order the
// elements that `body(i, out)` appends for each i < n.
template <class P>
Vec<uint64_t> filter_collect(const std::vector<uint64_t> &v) {
  return P::template collect<uint64_t>(v.size(), [&](size_t i, Vec<uint64_t> &out) {
    if (keep(v[i])) out.push_back(v[i]);
  });
}
template <class P>
Vec<uint32_t> flat_map(const std::vector<std::vector<uint32_t>> &v) {
  return P::template collect<uint32_t>(v.size(), [&](size_t i, Vec<uint32_t> &out) {
    for (uint32_t x : v[i]) out.push_back(x ^ 0x5555);
  });
}

// The kernels as a peer writes them: `P` has `construct(kernel)` (the row's runtime name),
// `par(f)` (runs `f` inside the runtime), one static function per kernel and `collect` (for
// filter-collect and flat-map, above).
template <class P>
int main(int argc, char **argv, const std::string &identity) {
  Args a = parse_args(argc, argv);
  if (a.info) {
    std::printf("{\"identity\":\"%s\"}\n", identity.c_str());
    return 0;
  }
  const std::string &k = a.kernel;
  size_t size = size_at(k, a.scale);
  Input in = make_input(k, size);
  P p(a);
  // One run: its seconds and its checksum (the checks after the clock stopped).
  auto once = [&]() -> std::pair<double, uint64_t> {
    double t = 0;
    uint64_t sum = 0;
    auto timed = [&](auto &&f) {
      p.par([&] {
        double t0 = peer::now();
        f();
        t = peer::now() - t0;
      });
    };
    if (k == "sum-squares") {
      timed([&] { sum = P::sum_squares(in.u64); });
      check_sum_squares(in.u64.size(), sum);
    } else if (k == "mandelbrot") {
      Vec<uint32_t> img;
      timed([&] { img = P::mandelbrot(size); });
      sum = ORDERED_SEED;
      for (uint32_t c : img) sum = mix(sum, c);
    } else if (k == "nbody") {
      std::vector<Body> b = in.bodies;
      timed([&] { P::nbody(b); });
      sum = ORDERED_SEED;
      for (auto &x : b) {
        for (double v : x.pos) sum = mix(sum, bits(v));
        for (double v : x.vel) sum = mix(sum, bits(v));
        for (double v : x.pos)
          if (!std::isfinite(v)) error("nbody: a position is not finite");
      }
    } else if (k == "wordfreq") {
      Counts m;
      timed([&] { m = P::wordfreq(in.text); });
      sum = check_wordfreq(m, in.words);
    } else if (k == "sort-u64") {
      std::vector<uint64_t> s = in.u64;
      timed([&] { P::sort(s); });
      sum = check_sorted(in.u64, s, [](uint64_t x) { return x; });
    } else if (k == "sort-strings") {
      std::vector<std::string> s = in.strings;
      timed([&] { P::sort(s); });
      sum = check_sorted(in.strings, s, [](const std::string &x) { return hash_str(x); });
    } else if (k == "filter-collect") {
      Vec<uint64_t> kept;
      timed([&] { kept = filter_collect<P>(in.u64); });
      sum = check_filtered(in.u64, kept);
    } else {
      Vec<uint32_t> flat;
      timed([&] { flat = flat_map<P>(in.ragged); });
      if (flat.size() != in.total)
        error("flat-map: " + std::to_string(flat.size()) + " elements collected, " +
              std::to_string(in.total) + " expected");
      sum = ORDERED_SEED;
      for (uint32_t x : flat) sum = mix(sum, x);
    }
    return {t, sum};
  };
  uint64_t first = 0;
  std::string times;
  for (unsigned i = 0; i < a.warmup + a.runs; i++) {
    auto [secs, sum] = once();
    if (i == 0) {
      first = sum;
    } else if (sum != first) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "%s: checksum %016" PRIx64 " differs from the first run's %016" PRIx64,
                    k.c_str(), sum, first);
      error(buf);
    }
    if (i >= a.warmup) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%s%.9f", times.empty() ? "" : ",", secs);
      times += buf;
    }
  }
  std::printf(
      "{\"kernel\":\"%s\",\"identity\":\"%s\",\"runtime\":\"%s\",\"threads\":%u,\"size\":%zu,"
      "\"times_s\":[%s],\"checksum\":\"%016" PRIx64 "\"}\n",
      k.c_str(), identity.c_str(), P::construct(k), a.threads, size, times.c_str(), first);
  return 0;
}

}  // namespace iter

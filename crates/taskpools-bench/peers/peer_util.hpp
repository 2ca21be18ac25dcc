// What every peer program of the workbench shares (forkjoin_*.cpp, iter_*.cpp): a one-line
// failure, the cores to place threads on, setting a thread's affinity, and a clock.
#pragma once

#include <sched.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace peer {

[[noreturn]] inline void fail(const std::string &why) {
  std::fprintf(stderr, "%s\n", why.c_str());
  std::exit(1);
}

// The cores to place threads on: TASKPOOLS_PEER_CORES (the workbench passes the cores it pins
// its own workers to, in its order), else the CPUs this process may run on.
inline std::vector<int> cores() {
  std::vector<int> v;
  if (const char *s = std::getenv("TASKPOOLS_PEER_CORES")) {
    const char *p = s;
    while (*p) {
      char *end;
      long c = std::strtol(p, &end, 10);
      if (end == p || c < 0 || c >= CPU_SETSIZE) fail(std::string("bad TASKPOOLS_PEER_CORES: ") + s);
      v.push_back((int)c);
      p = *end == ',' ? end + 1 : end;
      if (*end && *end != ',') fail(std::string("bad TASKPOOLS_PEER_CORES: ") + s);
    }
  } else {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0)
      for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) v.push_back(c);
  }
  if (v.empty()) v.push_back(0);
  return v;
}

// Sets the calling thread's affinity to `cs`.
inline void set_affinity(const std::vector<int> &cs) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cs) CPU_SET(c, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    std::perror("sched_setaffinity");
  }
}

inline double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace peer

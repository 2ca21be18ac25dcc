#!/usr/bin/env bash
# The scaling matrix, for a machine with many cores (a lent 16-core machine, say):
#
#   scripts/scale.sh [--threads LIST] [--budget SECONDS] [--out DIR] [--bin PATH] [--only STEPS]
#                    [--keep-traces]
#
# Runs every front end at 1, 2, 4, 8, 16 threads and all cores (the counts above the machine's
# cores are left out), pinned, from a prebuilt release binary (`cargo build --release -p
# taskpools-bench`; --bin names another), within the budget (default 480 s: a machine lent for
# 15 minutes, start-up included). It prints the machine's topology first, then writes one JSON
# file per experiment into DIR as each finishes (a run cut short keeps what it finished), the
# schedule summaries of the largest thread count (per-worker tasks, steals and idle time, in
# DIR/dispersion/), and at the end the speedup-vs-threads charts and tables (`taskpools
# scaling DIR`).
#
# Steps run in order; each gets at most its share of what is left of the budget (by weight: its
# expected seconds), and a step that does not finish in its share is stopped and named in
# DIR/skipped.txt; a step that finishes early leaves its time to the next ones. --only runs the
# steps named (a prefix such as `forkjoin` selects all its kernels); --keep-traces keeps the raw
# trace files of the dispersion steps (hundreds of MB), which are otherwise deleted once
# summarized.
set -euo pipefail
cd "$(dirname "$0")/.."

threads=""
budget=480
out=scale-out
bin=target/release/taskpools
only=""
keep_traces=no
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads=${2:?--threads needs a list such as 1,2,4}; shift 2 ;;
    --budget) budget=${2:?--budget needs seconds}; shift 2 ;;
    --out) out=${2:?--out needs a folder}; shift 2 ;;
    --bin) bin=${2:?--bin needs a path}; shift 2 ;;
    --only) only=${2:?--only needs step names}; shift 2 ;;
    --keep-traces) keep_traces=yes; shift ;;
    -h | --help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "scale.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$budget" in
  '' | *[!0-9]*) echo "scale.sh: --budget must be whole seconds, got '$budget'" >&2; exit 2 ;;
esac
if [ "$budget" -lt 10 ]; then
  echo "scale.sh: --budget $budget is too short to run anything (at least 10 s)" >&2
  exit 2
fi
if [ ! -x "$bin" ]; then
  echo "scale.sh: no binary at $bin: build it with 'cargo build --release -p taskpools-bench'" \
    "(or name one with --bin)" >&2
  exit 2
fi
cores=$(nproc)
if [ -z "$threads" ]; then
  threads=$(for t in 1 2 4 8 16 "$cores"; do [ "$t" -le "$cores" ] && echo "$t"; done |
    sort -n | uniq | paste -sd, -)
fi
if ! [[ "$threads" =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]]; then
  echo "scale.sh: --threads must be a comma-separated list of counts, got '$threads'" >&2
  exit 2
fi
top=$(tr , '\n' <<<"$threads" | sort -n | tail -1)
mkdir -p "$out/dispersion"
if ! touch "$out/.writable" 2>/dev/null; then
  echo "scale.sh: cannot write into $out" >&2
  exit 2
fi
rm -f "$out/.writable" "$out/skipped.txt"
start=$(date +%s)
log="$out/scale.log"
: >"$log"
say() { echo "$@" | tee -a "$log"; }
# Seconds since a `date +%s%N` stamp, to a tenth.
elapsed() {
  local ds=$((($(date +%s%N) - $1) / 100000000))
  echo "$((ds / 10)).$((ds % 10))"
}

# --- the steps ----------------------------------------------------------------------------------
# name | weight | command (THREADS, TOP and OUT are filled in). Our runtime is pinned in every
# experiment (their default, or --pin true).
places_specs() {
  # One place per core on the first N cores, for each thread count N of at least 2.
  for t in ${threads//,/ }; do
    [ "$t" -ge 2 ] || continue
    spec=$(seq 0 $((t - 1)) | sed 's/.*/{&}/' | paste -sd, -)
    echo "$t $spec"
  done
}
# Sizes and weights (a step's expected seconds on the lent 16-core machine of 2026-11-27, whose
# cores run these kernels about 2x slower than the 2-core development machine's): the 16-thread
# runs of our runtime last 50 ms or more, except where the budget does not allow it: tree-sum
# (at its largest size, 19 ms), N-Queens 14 (37 ms; 15 costs six times more) and the suite's
# default sizes (13-37 ms; mergesort 113 ms). The peers that run are the strongest at each grain
# (chili and rayon on the fine-grained kernels, rayon on the coarse ones); the data-flow graphs
# run ours alone (libgomp's tasks cost time quadratic in the task count at one thread), so that
# the peers' slow one-thread runs do not take the budget.
steps=(
  "forkjoin-fib|60|forkjoin --threads THREADS --reps 3 --kernels fib --fib 40 --peers rayon,chili --json OUT/forkjoin-fib.json"
  "forkjoin-tree-sum|19|forkjoin --threads THREADS --reps 3 --kernels tree-sum --tree-depth 25 --peers rayon,chili --json OUT/forkjoin-tree-sum.json"
  "forkjoin-quicksort|17|forkjoin --threads THREADS --reps 3 --kernels quicksort --sort-len 4194304 --peers rayon --json OUT/forkjoin-quicksort.json"
  "forkjoin-mergesort|20|forkjoin --threads THREADS --reps 3 --kernels mergesort --sort-len 4194304 --peers rayon --json OUT/forkjoin-mergesort.json"
  "forkjoin-matmul|22|forkjoin --threads THREADS --reps 3 --kernels matmul --matrix 1024 --peers rayon --json OUT/forkjoin-matmul.json"
  "queens|26|queens --n 14 --threads THREADS --reps 3 --front-ends task-pool,join --peers rayon --json OUT/queens.json"
  "synthetic-f1|45|synthetic --k 30 --f 1 --threads THREADS --reps 3 --pin true --pool sq1,rq,dq1,dq8,sdq1,dcwq,acr13,manber --json OUT/synthetic-f1.json"
  "synthetic-f40|36|synthetic --k 22 --f 40 --threads THREADS --reps 3 --pin true --pool sq1,dq2,dq8,sdq1,acr13,manber --json OUT/synthetic-f40.json"
  "dataflow|35|dataflow --tasks 100000 --threads THREADS --reps 3 --peers none --json OUT/dataflow.json"
  "suite|70|suite --threads THREADS --reps 3 --json OUT/suite.json"
)
while read -r t spec; do
  steps+=("places-$t|12|places --places $spec --reps 3 --no-policies --json OUT/places-$t.json")
done < <(places_specs)
# The schedules of the largest thread count: per-worker tasks, steals and idle time.
steps+=(
  "dispersion-fib|2|forkjoin --threads TOP --reps 1 --kernels fib --fib 34 --peers none --trace OUT/dispersion/trace-fib.json --json OUT/dispersion/fib.json"
  "dispersion-quicksort|2|forkjoin --threads TOP --reps 1 --kernels quicksort --sort-len 4194304 --peers none --trace OUT/dispersion/trace-quicksort.json --json OUT/dispersion/quicksort.json"
  "dispersion-queens|2|queens --n 10 --threads TOP --reps 1 --front-ends task-pool --pool private-deque,private-public --cutoff 0 --peers none --trace OUT/dispersion/trace-queens.json --json OUT/dispersion/queens.json"
  "dispersion-dataflow|2|dataflow --tasks 5000 --graphs random --threads TOP --reps 1 --peers none --trace OUT/dispersion/trace-dataflow.json --json OUT/dispersion/dataflow.json"
)
# Experiments that exist only in newer binaries join when the binary has them.
# rayon's iterators on stock rayon and on rayon patched onto taskpools: the two kernel programs
# of scripts/build-iter-kernels.sh (or the paths in ITER_STOCK and ITER_PATCHED), on the
# drop-in rayon-core's default deque and on the private deque (TASKPOOLS_RAYON_POOL). At
# these sizes each takes about 150 s on the lent 16-core machine (392 s at --scale 0.5 with 4
# invocations and 2 warm-up runs): with the other steps, give the matrix --budget 900, or run
# them alone with --only iter --budget 400.
iter_stock=${ITER_STOCK:-target/iter-kernels/stock/release/taskpools-iter-kernels}
iter_patched=${ITER_PATCHED:-target/iter-kernels/taskpools/release/taskpools-iter-kernels}
# Opt-in (they would take the other steps' time): with --only naming them, or a budget of at
# least 900 s.
if [[ ",$only," == *,iter* ]] || [ "$budget" -ge 900 ]; then
  want_iter=yes
else
  want_iter=no
fi
if [ "$want_iter" = no ]; then
  :
elif "$bin" iter --help >/dev/null 2>&1 && [ -x "$iter_stock" ] && [ -x "$iter_patched" ]; then
  iter_args="--threads THREADS --scale 0.25 --invocations 3 --warmup 2 --runs 3 --stock-bin $iter_stock --patched-bin $iter_patched"
  steps+=(
    "iter|150|iter $iter_args --json OUT/iter.json"
    "iter-private-deque|150|TASKPOOLS_RAYON_POOL=private-deque iter $iter_args --json OUT/iter-private-deque.json"
  )
else
  echo "note: the iter steps are left out: they need 'taskpools iter' and the kernel programs" \
    "of scripts/build-iter-kernels.sh (or ITER_STOCK and ITER_PATCHED)" >&2
fi
# Hierarchical radiosity on "largeroom" (Korch & Rauber's Figure 15), speed-up by interaction
# rate: from the paper's groups the central sq2 and sq4, the distributed dq1, the stealing dq2
# and dq6, the private/public dq8 and the combined sdq1; and our Chase-Lev pool.
if "$bin" radiosity --help >/dev/null 2>&1; then
  steps+=("radiosity|40|radiosity --scene largeroom --threads THREADS --reps 2 --pool sq2,sq4,dq1,dq2,dq6,dq8,sdq1,dcwq --json OUT/radiosity.json")
fi

selected() {
  [ -z "$only" ] && return 0
  local n
  for n in ${only//,/ }; do
    [[ "$1" == "$n" || "$1" == "$n"-* ]] && return 0
  done
  return 1
}

weight_left=0
for s in "${steps[@]}"; do
  IFS='|' read -r name w _ <<<"$s"
  selected "$name" && weight_left=$((weight_left + w))
done
[ "$weight_left" -gt 0 ] || { echo "scale.sh: --only '$only' selects no step" >&2; exit 2; }

# --- the machine --------------------------------------------------------------------------------
{
  echo "== machine ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
  echo "cores this process may use: $cores"
  if command -v lscpu >/dev/null 2>&1; then
    lscpu | grep -E '^(Model name|Architecture|CPU\(s\)|Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|NUMA node|L1d|L2|L3)' || true
  fi
  echo "caches of cpu0:"
  for c in /sys/devices/system/cpu/cpu0/cache/index*; do
    [ -r "$c/level" ] || continue
    echo "  L$(cat "$c/level") $(cat "$c/type") $(cat "$c/size" 2>/dev/null) shared with cpus $(cat "$c/shared_cpu_list" 2>/dev/null)"
  done
  for n in /sys/devices/system/node/node[0-9]*; do
    [ -r "$n/cpulist" ] && echo "NUMA $(basename "$n"): cpus $(cat "$n/cpulist")"
  done
  echo "threads: $threads (largest $top); budget ${budget} s; binary $bin"
} | tee "$out/topology.txt" | tee -a "$log"


for s in "${steps[@]}"; do
  IFS='|' read -r name w cmd <<<"$s"
  selected "$name" || continue
  now=$(date +%s)
  left=$((budget - (now - start) - 5))
  if [ "$left" -le 2 ]; then
    say "== $name: skipped, the budget is spent"
    echo "$name (budget spent)" >>"$out/skipped.txt"
    weight_left=$((weight_left - w))
    continue
  fi
  # Its share of what is left, by weight (a step that ended early left its time to this one).
  share=$((left * w / weight_left))
  weight_left=$((weight_left - w))
  cmd=${cmd//THREADS/$threads}
  cmd=${cmd//TOP/$top}
  cmd=${cmd//OUT/$out}
  # Leading VAR=value words are the step's environment.
  envs=()
  while [[ "$cmd" =~ ^([A-Z_]+=[^ ]*)\ (.*)$ ]]; do
    envs+=("${BASH_REMATCH[1]}")
    cmd=${BASH_REMATCH[2]}
  done
  say "== $name (at most ${share} s): ${envs[*]+${envs[*]} }taskpools $cmd"
  t0=$(date +%s%N)
  # shellcheck disable=SC2086 # the command is split into its words on purpose
  if timeout --signal=INT --kill-after=5 "$share" env ${envs[@]+"${envs[@]}"} "$bin" $cmd \
    >"$out/$name.txt" 2>&1; then
    say "   done in $(elapsed "$t0") s"
  else
    rc=$?
    say "   stopped (exit $rc) after $(elapsed "$t0") s; its output: $out/$name.txt"
    echo "$name (exit $rc after its share of ${share} s)" >>"$out/skipped.txt"
    tail -3 "$out/$name.txt" | tee -a "$log"
  fi
  case "$name" in
    dispersion-*)
      tr="$out/dispersion/trace-${name#dispersion-}.json"
      if [ -s "$tr" ]; then
        "$bin" trace "$tr" >"$out/dispersion/${name#dispersion-}-summary.txt" 2>&1 || true
        # The raw trace is large (every task, as Chrome JSON); its summary and Gantt charts stay.
        [ "$keep_traces" = yes ] || rm -f "$tr"
      fi
      ;;
  esac
done

# --- charts and tables --------------------------------------------------------------------------
if "$bin" scaling --help >/dev/null 2>&1; then
  "$bin" scaling "$out" | tee -a "$log" || say "scaling charts failed (see above)"
else
  say "note: this binary has no 'scaling' subcommand; the JSON files are in $out"
fi
say "== finished in $(($(date +%s) - start)) s; results in $out"
# One file to bring back (a lent machine returns a few files per command).
if tar czf "$out.tar.gz" -C "$(dirname "$out")" "$(basename "$out")" 2>/dev/null; then
  echo "packed into $out.tar.gz"
fi

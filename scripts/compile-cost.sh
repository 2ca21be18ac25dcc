#!/usr/bin/env bash
# The compile cost of the working phase in a user's crate (docs/phase.md): builds the binaries
# of crates/taskpools-bench/compile-cost (its own workspace and lock file; target directory
# target/compile-cost; cargo's default release profile, as a user's crate has it) once, then
# REPS times each, alternating, with the library already built: touch the binary's source,
# `cargo build --release --bin B` (not incremental), time it. Prints the load average before
# and after, and per binary the median wall and CPU (user + sys) seconds with their ranges,
# the binary's size (as built and stripped), and the lines of LLVM IR that rustc generates
# for the crate before optimization, which do not depend on the machine's load
# (`cargo llvm-lines` when installed: `cargo install cargo-llvm-lines`; else the lines of
# `--emit=llvm-ir` without optimization, into target/compile-cost-ir: other numbers).
#
#   scripts/compile-cost.sh [REPS [BIN...]]      defaults: 3, every binary in src/bin
#   PROFILE=dev scripts/compile-cost.sh ...      another cargo profile (default: release)
set -euo pipefail
cd "$(dirname "$0")/.."
crate=crates/taskpools-bench/compile-cost
export CARGO_TARGET_DIR=$PWD/target/compile-cost
# Every build compiles the crate whole (the dev profile would otherwise reuse most of it).
export CARGO_INCREMENTAL=0
reps=${1:-3}
profile=${PROFILE:-release}
outdir=$profile
[ "$profile" = dev ] && outdir=debug
shift || true
bins=("$@")
if [ ${#bins[@]} -eq 0 ]; then
  for f in "$crate"/src/bin/*.rs; do bins+=("$(basename "$f" .rs)"); done
fi
offline=(--offline)
if ! cargo tree --offline --locked --manifest-path "$crate/Cargo.toml" >/dev/null 2>&1; then
  offline=()
fi
cargo_build=(cargo build ${offline[@]+"${offline[@]}"} --locked --profile "$profile" --quiet --manifest-path "$crate/Cargo.toml")

for b in "${bins[@]}"; do "${cargo_build[@]}" --bin "$b"; done
times=$(mktemp)
trap 'rm -f "$times"' EXIT
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for ((r = 0; r < reps; r++)); do
  for b in "${bins[@]}"; do
    touch "$crate/src/bin/$b.rs"
    /usr/bin/time -f "$b %e %U %S" -a -o "$times" "${cargo_build[@]}" --bin "$b"
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

echo "profile $profile; load average before: $load_before; after: $load_after; $reps builds of each, alternating"
if cargo llvm-lines --version >/dev/null 2>&1; then how="cargo llvm-lines"; else how="lines of .ll"; fi
echo "LLVM IR lines: $how"
printf '%-10s %28s %28s %12s %12s %14s\n' binary "wall s: median (min-max)" "cpu s: median (min-max)" bytes stripped "LLVM IR lines"
for b in "${bins[@]}"; do
  exe=$CARGO_TARGET_DIR/$outdir/$b
  stripped=$(mktemp)
  strip -o "$stripped" "$exe"
  size=$(stat -c %s "$exe")
  ssize=$(stat -c %s "$stripped")
  rm -f "$stripped"
  if [ "$how" = "cargo llvm-lines" ]; then
    ir=$(cargo llvm-lines ${offline[@]+"${offline[@]}"} --locked --profile "$profile" --manifest-path "$crate/Cargo.toml" --bin "$b" 2>/dev/null |
      awk '/\(TOTAL\)/ { gsub(",", "", $1); print $1; exit }')
  else
    irdir=$PWD/target/compile-cost-ir
    touch "$crate/src/bin/$b.rs"
    CARGO_TARGET_DIR=$irdir cargo rustc ${offline[@]+"${offline[@]}"} --locked --profile "$profile" --quiet \
      --manifest-path "$crate/Cargo.toml" --bin "$b" -- --emit=llvm-ir -C no-prepopulate-passes
    ir=$(cat "$irdir"/$outdir/deps/"${b//-/_}"-*.ll | wc -l)
  fi
  awk -v b="$b" -v size="$size" -v ssize="$ssize" -v ir="$ir" '
    $1 == b { n++; w[n] = $2; c[n] = $3 + $4 }
    function med(a, n,   i, j, t) {
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return sprintf("%.1f (%.1f-%.1f)", n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2, a[1], a[n])
    }
    END { printf "%-10s %28s %28s %12d %12d %14s\n", b, med(w, n), med(c, n), size, ssize, ir }' "$times"
done

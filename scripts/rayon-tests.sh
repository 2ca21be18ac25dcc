#!/usr/bin/env bash
# rayon's own test suite (unit, integration and doc tests of rayon 1.12.0: iterators, slices,
# sorts, strings, collections, panic safety) on this repository's drop-in rayon-core
# (crates/rayon-core), which runs them on the taskpools runtime.
#
# Copies rayon out of the cargo registry into target/rayon-suite/rayon (rayon's own lock
# file included, as its own workspace) and runs `cargo test --release` there with rayon-core
# patched to crates/rayon-core and a target directory of its own (target/rayon-suite/target,
# kept between runs). The dev-dependencies (rand 0.9, rand_xorshift 0.4) come from crates.io.
# Where the registry has no rayon 1.12.0, it prints a note and exits 0.
#
# Every test passes; a test that cannot is skipped by name below, with its reason, and listed
# in crates/rayon-core/src/lib.rs ("What differs from rayon"). Extra arguments go to the test
# binaries (e.g. scripts/rayon-tests.sh --test-threads=1).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

version=1.12.0
src=""
for d in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/rayon-"$version"; do
  if [ -f "$d/Cargo.toml" ]; then
    src=$d
    break
  fi
done
if [ -z "$src" ]; then
  echo "note: rayon's test suite on crates/rayon-core skipped: rayon $version is not in the" \
    "cargo registry (\`cargo fetch\` in this workspace fetches it: the benchmarks' lock file" \
    "holds rayon $version)"
  exit 0
fi

work=target/rayon-suite
# A fresh copy only when there is none of this registry copy yet: an unchanged copy keeps its
# release build in the target directory warm between runs.
if [ "$(cat "$work/rayon/.copied-from" 2>/dev/null)" != "$src" ]; then
  rm -rf "$work/rayon"
  mkdir -p "$work"
  cp -Rp "$src" "$work/rayon"
  chmod -R u+w "$work/rayon"
  # Its own workspace, not a stray member of ours (it sits under our target/).
  printf '\n[workspace]\n' >>"$work/rayon/Cargo.toml"
  echo "$src" >"$work/rayon/.copied-from"
fi

# Tests that cannot pass on taskpools, by name (a substring of the test's path), each with
# its reason; keep in step with the crate docs. None so far.
skip_names=()
skips=()
for t in ${skip_names[@]+"${skip_names[@]}"}; do
  skips+=(--skip "$t")
done

patch=(--config "patch.crates-io.rayon-core.path=\"$root/crates/rayon-core\"")
export CARGO_TARGET_DIR="$root/$work/target"
start=$(date +%s)
cd "$work/rayon"
if ! cargo fetch "${patch[@]}" --quiet; then
  echo "rayon-tests: could not fetch rayon's dependencies (either, and the dev-dependencies" \
    "rand 0.9 and rand_xorshift 0.4) from crates.io; see cargo's error above" >&2
  exit 1
fi
# The patch must be the rayon-core in use (Cargo only warns when it is not).
in_use=$(cargo tree "${patch[@]}" -e normal -i rayon-core 2>/dev/null | sed -n 1p)
if [[ "$in_use" != *"($root/crates/rayon-core)"* ]]; then
  echo "rayon-tests: the patch did not take effect; rayon-core in use: ${in_use:-none}" >&2
  exit 1
fi
log="$root/$work/test.log"
cargo test --release "${patch[@]}" -- ${skips[@]+"${skips[@]}"} "$@" 2>&1 | tee "$log"
passed=$(sed -n 's/^test result: ok\. \([0-9]*\) passed.*/\1/p' "$log" | awk '{s += $1} END {print s + 0}')
echo "rayon $version's test suite on crates/rayon-core: $passed tests passed" \
  "(${#skip_names[@]} skipped by name) in $(($(date +%s) - start)) s"

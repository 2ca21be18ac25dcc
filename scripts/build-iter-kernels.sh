#!/usr/bin/env bash
# Builds the two kernel programs of `taskpools iter` (crates/taskpools-bench/iter-kernels,
# its own workspace and lock file) in release mode:
#   target/iter-kernels/stock/release/taskpools-iter-kernels      rayon on stock rayon-core
#   target/iter-kernels/taskpools/release/taskpools-iter-kernels  rayon on crates/rayon-core
# The patched one is built from a copy of the crate (target/iter-kernels/patched-src), since
# `--config patch...` rewrites the lock file it builds with; the committed lock file stays as
# it is. Checks with `cargo tree` that each build has the rayon-core it should, and with the
# binaries' `--info` which one runs. Both builds are incremental: a second run takes seconds.
# The crates come from the cargo registry's copy when it has them (rayon 1.12.0 and its
# dependencies, and the patched build's taskpools dependencies, are all in the workspace's lock
# file, so a workspace build has fetched them), else from crates.io.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
crate=crates/taskpools-bench/iter-kernels
out=target/iter-kernels
bin=taskpools-iter-kernels
mkdir -p "$out"

# Offline where the registry's copy has every crate (no index update), else online.
offline=(--offline)
if ! cargo tree --offline --locked --manifest-path "$crate/Cargo.toml" >/dev/null 2>&1; then
  offline=()
fi

check_tree() { # manifest, expected substring, what, cargo options...
  local tree
  tree=$(cargo tree ${offline[@]+"${offline[@]}"} --manifest-path "$1" "${@:4}" -e normal -i rayon-core 2>/dev/null | sed -n 1p)
  if [[ "$tree" != *"$2"* ]]; then
    echo "build-iter-kernels: the $3 build's rayon-core is ${tree:-none}, expected $2" >&2
    exit 1
  fi
}

echo "== $out/stock: rayon on stock rayon-core"
check_tree "$crate/Cargo.toml" "rayon-core v1.13.0" stock
if cargo tree ${offline[@]+"${offline[@]}"} --manifest-path "$crate/Cargo.toml" -e normal \
  -i rayon-core 2>/dev/null | sed -n 1p | grep -q crates/rayon-core; then
  echo "build-iter-kernels: the stock build resolves to crates/rayon-core" >&2
  exit 1
fi
cargo build --release --locked ${offline[@]+"${offline[@]}"} --manifest-path "$crate/Cargo.toml" \
  --target-dir "$out/stock"

echo "== $out/taskpools: rayon on crates/rayon-core (taskpools)"
# A copy that keeps the files' times, so that cargo sees no change when there is none.
src="$out/patched-src"
mkdir -p "$src"
cp -p "$crate/Cargo.toml" "$src/"
# The lock file only when ours changed (the patched build rewrites the copy).
if ! cmp -s "$crate/Cargo.lock" "$src/Cargo.lock.orig" 2>/dev/null; then
  cp -p "$crate/Cargo.lock" "$src/Cargo.lock"
  cp -p "$crate/Cargo.lock" "$src/Cargo.lock.orig"
fi
rm -rf "$src/src.new"
cp -Rp "$crate/src" "$src/src.new"
if ! diff -r -q "$src/src.new" "$src/src" >/dev/null 2>&1; then
  rm -rf "$src/src"
  mv "$src/src.new" "$src/src"
else
  rm -rf "$src/src.new"
fi
patch=(--config "patch.crates-io.rayon-core.path=\"$root/crates/rayon-core\"")
check_tree "$src/Cargo.toml" "($root/crates/rayon-core)" taskpools "${patch[@]}"
if ! cargo build --release ${offline[@]+"${offline[@]}"} --manifest-path "$src/Cargo.toml" \
  --target-dir "$out/taskpools" "${patch[@]}"; then
  if [ ${#offline[@]} -eq 0 ]; then
    exit 1
  fi
  echo "build-iter-kernels: retrying online (the patched build needs crates the registry's" \
    "copy lacks)"
  cargo build --release --manifest-path "$src/Cargo.toml" --target-dir "$out/taskpools" \
    "${patch[@]}"
fi

stock=$("$out/stock/release/$bin" --info)
ours=$("$out/taskpools/release/$bin" --info)
if [[ "$stock" != *'"rayon_core":"rayon"'* || "$ours" != *'"rayon_core":"taskpools"'* ]]; then
  echo "build-iter-kernels: the binaries report stock: $stock, patched: $ours" >&2
  exit 1
fi
echo "built $out/stock/release/$bin ($stock)"
echo "built $out/taskpools/release/$bin ($ours)"

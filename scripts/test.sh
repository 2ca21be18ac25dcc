#!/usr/bin/env bash
# The project's test command (README, first section); .ci/run runs exactly this.
#   1. formatting, lints and the docs' links, 2. unit, integration, property, CLI and doc tests,
#   then the library's examples (crates/taskpools/examples, each run once at its default
#   size), then rayon's own test suite on the drop-in rayon-core (scripts/rayon-tests.sh); the
#   `taskpools iter` CLI test builds its two kernel programs (scripts/build-iter-kernels.sh,
#   target/iter-kernels: about 70 s the first time, seconds when up to date), 3. loom
#   models, then `cargo check` of the library for aarch64 Linux, Windows and macOS where
#   those targets are installed, 4. AddressSanitizer (nightly toolchain) on the deque, pool,
#   ownership, fork-join, data-flow and places tests and on the workbench's peer drivers
#   (cli_drivers), a debug build, so debug assertions on
#   too (they check the frame stack's LIFO invariant; without nightly the lib, fork-join,
#   deque and phase tests run again in a plain debug build instead), then Miri (nightly with
#   the miri component) on the queue, deque and fork-join unit tests, 5. valgrind memcheck on
#   the release binaries of the deque, pool, ownership, fork-join, data-flow, places and trace
#   tests, the cross checks, 4, Miri and 5 each skipped with a printed note where the target
#   or tool is missing. Where Open MPI is installed, the
#   distributed phase (cargo feature `mpi`) is linted too, and step 2 builds and tests both
#   crates with the feature on, its mpirun tests included (one release build serves both:
#   the feature only adds code). Step 2 builds with the `release-tests` profile (Cargo.toml),
#   which step 5 reuses.
set -euo pipefail
cd "$(dirname "$0")/.."

features=()
if command -v mpirun >/dev/null 2>&1 && command -v mpicc >/dev/null 2>&1; then
  features=(--features taskpools/mpi,taskpools-bench/mpi)
else
  echo "note: MPI tests skipped: no MPI installed" \
    "(apt-get install libopenmpi-dev openmpi-bin libclang-dev)"
fi

cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
if [ ${#features[@]} -gt 0 ]; then
  echo "== the distributed working phase (cargo feature mpi): lints"
  cargo clippy --workspace --all-targets "${features[@]}" -- -D warnings
fi
# The docs: intra-doc links that resolve, in the public docs and in the private items' docs
# (a link that broke when its target moved to another file fails here).
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps ${features[@]+"${features[@]}"}
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --document-private-items \
  ${features[@]+"${features[@]}"}
cargo test --workspace --profile release-tests ${features[@]+"${features[@]}"}
# The library's examples (crates/taskpools/examples, one per front end), each run at its
# default size; each checks its own result and fails if a check does. The `cargo test` above
# built them (it builds every example, with the release-tests profile here), so their
# executables are taken from that build, as the valgrind step takes the test binaries:
# `cargo run --profile release-tests -p taskpools --example NAME` would resolve the
# dependencies' features for the library alone and rebuild serde_core, num-traits and
# once_cell and with them the examples (with MPI, the library too). distributed_tree (feature
# mpi) runs under mpirun on 2 ranks where Open MPI is installed, and is not built elsewhere.
echo "== the library's examples"
example_bins=$(cargo test --workspace --profile release-tests ${features[@]+"${features[@]}"} --no-run \
  --quiet --message-format=json |
  sed -n 's/.*"kind":\["example"\].*"executable":"\([^"]*\)".*/\1/p')
for src in crates/taskpools/examples/*.rs; do
  name=$(basename "$src" .rs)
  bin=$(grep "/examples/$name\$" <<<"$example_bins" || true)
  if [ "$name" = distributed_tree ] && [ ${#features[@]} -eq 0 ]; then
    echo "note: example distributed_tree skipped: it needs MPI (feature mpi)"
    continue
  fi
  if [ -z "$bin" ]; then
    echo "examples step: the build has no executable for examples/$name.rs" >&2
    exit 1
  fi
  echo "-- example $name"
  started=$SECONDS
  if [ "$name" = distributed_tree ]; then
    mpirun --allow-run-as-root --oversubscribe --bind-to none -n 2 "$bin"
  else
    "$bin"
  fi
  echo "   ($((SECONDS - started)) s)"
done
# rayon 1.12's own test suite on the drop-in rayon-core (crates/rayon-core), in a scratch
# workspace with its own target directory (target/rayon-suite); skipped with a note where
# the cargo registry has no rayon 1.12.0.
echo "== rayon's test suite on crates/rayon-core"
bash scripts/rayon-tests.sh
# loom explores every interleaving up to LOOM_MAX_PREEMPTIONS preemptions per execution;
# a separate target dir keeps the --cfg loom build from invalidating the normal one. One
# model at a time: on 2 cores, two at once took longer (81 s against 68 s).
RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-3}" \
  CARGO_TARGET_DIR=target/loom cargo test --release -p taskpools --lib loom -- --test-threads=1

# The library on other systems: `cargo check` (lib, tests and examples, warnings denied) for
# 64-bit ARM Linux, Windows (MSVC) and Apple silicon macOS, each where its standard library is
# installed (`rustup target add TARGET`; a check needs no linker or SDK). Pinning and the
# topology from sysfs are Linux's; elsewhere they are compiled out (runtime/pinning.rs,
# places/topology.rs), so these builds show that the rest does not depend on them.
installed_targets=$(rustup target list --installed 2>/dev/null || true)
for target in aarch64-unknown-linux-gnu x86_64-pc-windows-msvc aarch64-apple-darwin; do
  if grep -x "$target" <<<"$installed_targets" >/dev/null; then
    echo "== cargo check of the library for $target"
    RUSTFLAGS="-D warnings" cargo check -p taskpools --all-targets --target "$target" --quiet
  else
    echo "note: cargo check for $target skipped: its standard library is not installed" \
      "(rustup target add $target)"
  fi
done

# AddressSanitizer needs a nightly toolchain (-Zsanitizer); the stable toolchain is all the
# rest of this script needs, so without nightly the run is skipped with a note.
host=$(rustc -vV | sed -n 's/^host: //p')
# (grep without -q reads all of rustup's output: with pipefail, an early exit would fail rustup)
if rustup toolchain list 2>/dev/null | grep '^nightly' >/dev/null && [ "$host" = x86_64-unknown-linux-gnu ]; then
  echo "== AddressSanitizer (nightly, $host)"
  # scripts/lsan.supp: the one leak a test makes on purpose (a forgotten reduction copy).
  LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp" \
    RUSTFLAGS="-Zsanitizer=address" CARGO_TARGET_DIR=target/asan \
    cargo +nightly test -p taskpools --target "$host" --lib --test ownership --test deques \
    --test deque_scenarios --test private_deque_scenarios --test pools --test panic_stress --test forkjoin --test forkjoin_liveness \
    --test phase_runtime --test dataflow --test places --test places_phase --test places_topology --test trace \
    --test local_state --test spawn --test broadcast --test runtime_builder --test forkjoin_context \
    --test spawn_async --test scope_counts --test cancel
  # The workbench's own unsafe code: loading a peer runtime's driver (dlopen, dlsym, the
  # function pointers handed to C) in the child processes of every built driver.
  RUSTFLAGS="-Zsanitizer=address" CARGO_TARGET_DIR=target/asan \
    cargo +nightly test -p taskpools-bench --target "$host" --test cli_drivers
else
  echo "note: AddressSanitizer run skipped: it needs the nightly toolchain on x86_64 Linux" \
    "(rustup toolchain install nightly); the fork-join and deque tests run with debug" \
    "assertions instead"
  cargo test -p taskpools --lib --test forkjoin --test deques --test phase_runtime
fi

# Miri (nightly, with the miri and rust-src components) interprets the unit tests of the
# queues and deques (queue::: Chase-Lev, FCDQ, the private deque, the two-lock queue and the
# sequential queues) and of fork-join's frame stack and worker waits (runtime::frames,
# runtime::worker) and data-flow priorities' tickets, reductions and weak tasks (dataflow::tests::miri_),
# checking every memory access against Rust's aliasing and validity rules,
# threads included. Tests that run threads take smaller sizes under cfg(miri). 43 to 87 s
# here (2 cores beside other builds, 2026-11-28, the library's changes included: Miri
# interprets it when the tests run); the first run also builds Miri's standard library
# (`cargo miri setup`) and the dependencies. Skipped with a note without nightly or Miri.
# (`miri setup` fails where rust-src is missing or its sysroot cannot be built: a skip, not a
# failure of the test command.)
if cargo +nightly miri --version >/dev/null 2>&1 && cargo +nightly miri setup >/dev/null 2>&1; then
  echo "== Miri: queue, deque, fork-join and data-flow (priorities, reductions, weak tasks) unit tests"
  cargo +nightly miri test -p taskpools --lib -- queue:: runtime::frames runtime::worker \
    dataflow::tests::miri_
else
  echo "note: Miri run skipped: it needs the nightly toolchain with Miri" \
    "(rustup toolchain install nightly; rustup component add --toolchain nightly miri rust-src)"
fi

# valgrind memcheck on the release test binaries of the deques, the pools, the ownership
# checks, fork-join, data-flow, places and traces. Threads run one at a time under valgrind:
# --fair-sched lets spinning threads take turns, and TASKPOOLS_STRESS=small shrinks the stress
# tests' sizes (not what they check).
if command -v valgrind >/dev/null 2>&1; then
  echo "== valgrind memcheck"
  # The binaries of step 2 (asking with `-p taskpools` alone would resolve the dependencies'
  # features differently and rebuild them), all twelve or a clear failure.
  bins=$(cargo test --workspace --profile release-tests ${features[@]+"${features[@]}"} --no-run --quiet \
    --message-format=json |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' |
    grep -E '/(ownership|deques|deque_scenarios|private_deque_scenarios|pools|forkjoin|dataflow|places|places_phase|places_topology|trace|cancel)-[0-9a-f]+$' ||
    true)
  if [ "$(wc -w <<<"$bins")" -ne 12 ]; then
    echo "valgrind step: expected the 12 test binaries ownership, deques, deque_scenarios," \
      "private_deque_scenarios, pools, forkjoin, dataflow, places, places_phase," \
      "places_topology, trace, cancel; found: ${bins:-none}" >&2
    exit 1
  fi
  for b in $bins; do
    echo "valgrind $(basename "$b")"
    # One test at a time: valgrind runs one thread at a time anyway, and tests run side by
    # side only shared it (a 2 s test hit its 30 s watchdog once).
    TASKPOOLS_STRESS=small valgrind -q --fair-sched=yes --error-exitcode=99 "$b" -q --test-threads=1
  done
else
  echo "note: valgrind run skipped: valgrind is not installed (apt-get install valgrind)"
fi


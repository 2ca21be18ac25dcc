#!/usr/bin/env bash
# The project's test command (README, first section); .ci/run runs exactly this.
#   1. formatting and lints, 2. unit, integration, property and CLI tests, 3. the fork-join
#   and deque tests again with debug assertions (they check the frame stack's LIFO invariant),
#   4. loom models.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace --release
cargo test -p taskpools --lib --test forkjoin --test deques
# loom explores every interleaving up to LOOM_MAX_PREEMPTIONS preemptions per execution;
# a separate target dir keeps the --cfg loom build from invalidating the normal one.
RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-3}" \
  CARGO_TARGET_DIR=target/loom cargo test --release -p taskpools --lib loom

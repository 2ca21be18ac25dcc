//! The working phase's trace records (tasks, puts, idle times), out of line so that an untraced
//! phase pays only a branch for them.

use crate::runtime::trace::{Source, TraceBuf};

// The traced phase's recording, out of line: the untraced phase pays one predictable branch
// per task and per put. (The loop is deliberately not compiled twice, traced and untraced:
// with two callers, the compiler stops inlining the pool's `get` and `put` into the loop,
// which costs far more than the branches — about 30 instructions per task on `dq8`.)
#[inline(never)]
pub(super) fn traced_put(tr: &TraceBuf) {
    tr.put();
}

#[inline(never)]
pub(super) fn traced_task(tr: &TraceBuf, me: usize, misses: u64) {
    tr.phase_misses(misses);
    tr.start(match crate::stats::take_steal() {
        Some((victim, tasks)) if victim as usize != me => Source::PoolSteal { victim, tasks },
        _ => Source::Pool,
    });
}

/// A traced task's span: its end is recorded when this drops (also when the task panics).
pub(super) struct TaskSpan<'a> {
    pub(super) trace: Option<&'a TraceBuf>,
    /// Puts to record before the end (pools with [`TaskPool::PUTS_WAIT_FOR_OWNER`](crate::TaskPool::PUTS_WAIT_FOR_OWNER): those
    /// made since the task's last `queued`; set when the task returns).
    pub(super) puts: u64,
}

impl Drop for TaskSpan<'_> {
    #[inline]
    fn drop(&mut self) {
        if let Some(tr) = self.trace {
            traced_end(tr, self.puts);
        }
    }
}

#[inline(never)]
pub(super) fn traced_idle(tr: &TraceBuf, misses: u64) {
    tr.phase_misses(misses);
    tr.idle();
}

#[inline(never)]
fn traced_end(tr: &TraceBuf, puts: u64) {
    for _ in 0..puts {
        tr.put();
    }
    tr.end();
}

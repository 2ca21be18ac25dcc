//! The tasks of a distributed run: N-Queens nodes and synthetic A(k), serializable to cross
//! ranks, counting in the worker's state where a fault may be injected.

use serde::{Deserialize, Serialize};
use taskpools::synthetic::A;
use taskpools::{Ctx, Task};

use crate::experiments::queens::Board;

// N-Queens, one task per node, with a board that crosses ranks.

/// A node of the N-Queens experiment's search tree, as a task.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Queen(Board);

impl Queen {
    pub(super) fn root(n: u32) -> Queen {
        Queen(Board::empty(n))
    }
    pub(super) fn children(self) -> impl Iterator<Item = Queen> {
        let b = self.0;
        let mut free = b.free();
        std::iter::from_fn(move || {
            if free == 0 {
                return None;
            }
            let q = free & free.wrapping_neg();
            free ^= q;
            Some(Queen(b.place(q)))
        })
    }
}

/// Counts solutions in the worker's state; a process may be made to fail here.
impl Task<Counts> for Queen {
    fn run(self, ctx: &mut Ctx<'_, Self, Counts>) {
        ctx.local().nodes += 1;
        ctx.local().fault();
        if self.0.solved() {
            ctx.local().solutions += 1;
            return;
        }
        for c in self.children() {
            ctx.put(c);
        }
    }
}

/// The synthetic task with a worker state (for the fault injection).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Synth(pub(super) A);

impl Task<Counts> for Synth {
    fn run(self, ctx: &mut Ctx<'_, Self, Counts>) {
        ctx.local().nodes += 1;
        ctx.local().fault();
        let A { i, f } = self.0;
        let units = u64::from(f);
        if i <= 0 {
            taskpools::synthetic::work(100 * units);
        } else {
            taskpools::synthetic::work(10 * units);
            ctx.put(Synth(A { i: i - 2, f }));
            taskpools::synthetic::work(50 * units);
            ctx.put(Synth(A { i: i - 1, f }));
            taskpools::synthetic::work(100 * units);
        }
    }
}

/// Per-worker counters, and the fault to inject after some tasks.
#[derive(Default)]
pub struct Counts {
    pub(super) nodes: u64,
    pub(super) solutions: u64,
    pub(super) fault: Option<Fault>,
}

#[derive(Clone, Copy)]
pub(super) enum Fault {
    Panic,
    Die,
}

impl Counts {
    #[inline]
    fn fault(&mut self) {
        if let Some(f) = self.fault {
            if self.nodes == 1000 {
                match f {
                    Fault::Panic => panic!("injected panic (--panic-on-rank) after 1000 tasks"),
                    Fault::Die => {
                        eprintln!("injected failure (--die-on-rank): this process exits now");
                        std::process::exit(3)
                    }
                }
            }
        }
    }
}

/// Sequential N-Queens: (solutions, nodes).
pub(super) fn queens_seq(b: Queen) -> (u64, u64) {
    crate::experiments::queens::sequential(b.0)
}

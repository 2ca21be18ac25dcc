//! The task graphs of the experiment (independent, chains, fan-in-2, fan-in-4, random, accumulate) as
//! the arrays every variant runs from, and their direct predecessors per task.

use anyhow::Result;

/// A task graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Graph {
    /// No dependences.
    Independent,
    /// `width` chains.
    Chains,
    /// Read one block of the other buffer.
    FanIn2,
    /// Read three blocks of the other buffer.
    FanIn4,
    /// Random DAG of fixed width.
    Random,
    /// Adds into one of `width` bins chosen at random, no reads: additions commute, so the
    /// bins can be declared `commutative` instead of `inout` (a histogram).
    Accumulate,
}

impl Graph {
    /// Every graph.
    pub const ALL: [Graph; 6] = [
        Graph::Independent,
        Graph::Chains,
        Graph::FanIn2,
        Graph::FanIn4,
        Graph::Random,
        Graph::Accumulate,
    ];

    /// The name on the command line and in the output.
    pub fn name(self) -> &'static str {
        match self {
            Graph::Independent => "independent",
            Graph::Chains => "chains",
            Graph::FanIn2 => "fan-in-2",
            Graph::FanIn4 => "fan-in-4",
            Graph::Random => "random",
            Graph::Accumulate => "accumulate",
        }
    }

    /// Parses a name.
    pub fn from_name(s: &str) -> Result<Graph> {
        Graph::ALL
            .into_iter()
            .find(|g| g.name() == s)
            .ok_or_else(|| {
                let known: Vec<_> = Graph::ALL.iter().map(|g| g.name()).collect();
                anyhow::anyhow!("unknown graph `{s}`; known: {}", known.join(", "))
            })
    }
}

/// A graph as arrays (the layout the C side takes).
pub(super) struct Tasks {
    pub(super) out: Vec<i32>,
    pub(super) reads: Vec<i32>,
    pub(super) nreads: Vec<i32>,
    pub(super) blocks: usize,
    /// Tasks per row, when each row's tasks are independent of each other.
    pub(super) rows: Option<usize>,
}

pub(super) fn build(g: Graph, n: usize, w: usize) -> Tasks {
    let mut t = Tasks {
        out: Vec::with_capacity(n),
        reads: Vec::with_capacity(3 * n),
        nreads: Vec::with_capacity(n),
        blocks: 0,
        rows: Some(w),
    };
    let mut rng = fastrand::Rng::with_seed(7);
    for i in 0..n {
        let (r, c) = (i / w, i % w);
        let (src, dst) = ((r % 2) * w, ((r + 1) % 2) * w);
        let (o, rd): (usize, Vec<usize>) = match g {
            Graph::Independent => (i, vec![]),
            Graph::Chains => (c, vec![]),
            Graph::FanIn2 => (dst + c, vec![src + c]),
            Graph::FanIn4 => (
                dst + c,
                vec![src + (c + w - 1) % w, src + c, src + (c + 1) % w],
            ),
            Graph::Random => {
                let o = rng.usize(..w);
                let mut a = rng.usize(..w);
                while a == o {
                    a = rng.usize(..w);
                }
                let mut b = rng.usize(..w);
                while b == o || b == a {
                    b = rng.usize(..w);
                }
                (o, vec![a, b])
            }
            Graph::Accumulate => (rng.usize(..w), vec![]),
        };
        t.out.push(o as i32);
        t.nreads.push(rd.len() as i32);
        for k in 0..3 {
            t.reads.push(rd.get(k).map_or(-1, |&x| x as i32));
        }
    }
    t.blocks = match g {
        Graph::Independent => n,
        Graph::Chains | Graph::Random | Graph::Accumulate => w,
        Graph::FanIn2 | Graph::FanIn4 => 2 * w,
    };
    if matches!(g, Graph::Random | Graph::Independent | Graph::Accumulate) {
        t.rows = if g == Graph::Independent {
            Some(n)
        } else {
            None
        };
    }
    t
}

/// Direct predecessors per task: for each task, the distinct earlier tasks it conflicts
/// with through the last writer or the readers since (the rules of the look-up table).
pub(super) fn preds_per_task(t: &Tasks) -> f64 {
    let mut writer: Vec<Option<usize>> = vec![None; t.blocks];
    let mut readers: Vec<Vec<usize>> = vec![Vec::new(); t.blocks];
    let mut total = 0usize;
    for i in 0..t.out.len() {
        let mut preds: Vec<usize> = Vec::new();
        for k in 0..t.nreads[i] as usize {
            let b = t.reads[3 * i + k] as usize;
            preds.extend(writer[b]);
            readers[b].push(i);
        }
        let o = t.out[i] as usize;
        if readers[o].is_empty() {
            preds.extend(writer[o]);
        } else {
            preds.extend(readers[o].iter().copied().filter(|&x| x != i));
        }
        readers[o].clear();
        writer[o] = Some(i);
        preds.sort_unstable();
        preds.dedup();
        total += preds.len();
    }
    total as f64 / t.out.len() as f64
}

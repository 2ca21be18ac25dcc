//! The data-flow task graph of a [`Trace`] and its critical path (span) and work.

use super::{EventKind, Trace};
use crate::Error;

impl Trace {
    /// The data-flow task graph of this trace: each task that ran (with its worker, times,
    /// own work, parent and where in its parent's work it was spawned), the dependences
    /// between siblings, the root scopes, and the `sync`s.
    ///
    /// A task's own work is its duration less the jobs its worker ran nested inside it and
    /// less its waits for its children (at a `sync` or at its end).
    ///
    /// ```
    /// let rt = taskpools::Runtime::builder().threads(2).trace(1 << 12).build()?;
    /// let mut v = [0u64; 4];
    /// rt.install(|| {
    ///     taskpools::dataflow::scope(|df| {
    ///         let r = df.region(&mut v);
    ///         for _ in 0..4 {
    ///             df.spawn(r.inout(), |_, v| v[0] += 1); // a chain: each waits for the one before
    ///         }
    ///     })
    /// });
    /// let g = rt.take_trace()?.unwrap().task_graph();
    /// assert_eq!((g.tasks.len(), g.deps.len(), g.roots.len()), (4, 3, 1));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn task_graph(&self) -> TaskGraph {
        use std::collections::HashMap;
        struct Open {
            start: u64,
            task: Option<u64>,
            nested: u64,
        }
        // Where a task's (or root scope's) own work is counted: its worker, the stack depth
        // of its job, when it began and the job's nested time then.
        struct Origin {
            worker: u32,
            depth: usize,
            t0: u64,
            nested0: u64,
        }
        let mut stacks: Vec<Vec<Open>> = (0..self.workers).map(|_| Vec::new()).collect();
        let mut origin: HashMap<u64, Origin> = HashMap::new();
        // Per task: its waits so far (ns, nested jobs left out) and the one under way.
        let mut waited: HashMap<u64, u64> = HashMap::new();
        let mut waiting: HashMap<u64, (u64, u64)> = HashMap::new();
        let mut spawned: HashMap<u64, (u64, u64, usize)> = HashMap::new();
        let mut spawn_count: HashMap<u64, usize> = HashMap::new();
        let mut g = TaskGraph::default();
        for e in &self.events {
            let w = e.worker as usize;
            let Some(stack) = stacks.get_mut(w) else {
                continue;
            };
            // The own work of `id` so far, if it runs here (as the innermost job).
            let own = |id: u64, stack: &Vec<Open>, waited: &HashMap<u64, u64>| -> Option<u64> {
                let o = origin.get(&id)?;
                if o.worker != e.worker || o.depth != stack.len() {
                    return None;
                }
                let nested = stack.last().map_or(0, |t| t.nested);
                Some(
                    e.t_ns
                        .saturating_sub(o.t0)
                        .saturating_sub(nested.saturating_sub(o.nested0))
                        .saturating_sub(waited.get(&id).copied().unwrap_or(0)),
                )
            };
            match e.kind {
                EventKind::Start(_) => stack.push(Open {
                    start: e.t_ns,
                    task: None,
                    nested: 0,
                }),
                EventKind::Task { id } => {
                    let depth = stack.len();
                    if let Some(top) = stack.last_mut() {
                        if top.task.is_none() {
                            top.task = Some(id);
                            origin.insert(
                                id,
                                Origin {
                                    worker: e.worker,
                                    depth,
                                    t0: top.start,
                                    nested0: 0,
                                },
                            );
                        }
                    }
                }
                EventKind::Spawn { parent: 0, child } => {
                    g.roots.push(child);
                    g.root_work.insert(child, 0);
                    origin.insert(
                        child,
                        Origin {
                            worker: e.worker,
                            depth: stack.len(),
                            t0: e.t_ns,
                            nested0: stack.last().map_or(0, |t| t.nested),
                        },
                    );
                }
                EventKind::Spawn { parent, child } => {
                    let at = own(parent, stack, &waited).unwrap_or(0);
                    let count = spawn_count.entry(parent).or_default();
                    spawned.insert(child, (parent, at, *count));
                    *count += 1;
                    if let Some(r) = g.root_work.get_mut(&parent) {
                        *r = (*r).max(at);
                    }
                }
                EventKind::Wait { task } => {
                    if let Some(at) = own(task, stack, &waited) {
                        let nested = stack.last().map_or(0, |t| t.nested);
                        waiting.insert(task, (e.t_ns, nested));
                        if let Some(r) = g.root_work.get_mut(&task) {
                            *r = (*r).max(at);
                        }
                    }
                }
                EventKind::Sync { task } => {
                    if let Some((t, n)) = waiting.remove(&task) {
                        let nested = stack.last().map_or(0, |t| t.nested);
                        let w = waited.entry(task).or_default();
                        *w = w.saturating_add(
                            e.t_ns
                                .saturating_sub(t)
                                .saturating_sub(nested.saturating_sub(n)),
                        );
                    }
                    if let Some(at) = own(task, stack, &waited) {
                        if let Some(r) = g.root_work.get_mut(&task) {
                            *r = (*r).max(at);
                        }
                        let before = spawn_count.get(&task).copied().unwrap_or(0);
                        g.syncs.entry(task).or_default().push((at, before));
                    }
                }
                EventKind::End => {
                    if let Some(o) = stack.pop() {
                        let dur = e.t_ns.saturating_sub(o.start);
                        // Sums saturate: the times may come from a file.
                        if let Some(parent) = stack.last_mut() {
                            parent.nested = parent.nested.saturating_add(dur);
                        }
                        if let Some(id) = o.task {
                            let mut wait = waited.remove(&id).unwrap_or(0);
                            if let Some((t, n)) = waiting.remove(&id) {
                                wait = wait.saturating_add(
                                    e.t_ns
                                        .saturating_sub(t)
                                        .saturating_sub(o.nested.saturating_sub(n)),
                                );
                            }
                            // Filled in below (a child's end may sort before its
                            // parent's spawn event where clocks of CPUs differ slightly).
                            let (parent, spawned_after_ns, spawn_index) = (0, 0, 0);
                            g.tasks.insert(
                                id,
                                TaskNode {
                                    worker: e.worker,
                                    start_ns: o.start,
                                    end_ns: e.t_ns.max(o.start),
                                    work_ns: dur.saturating_sub(o.nested).saturating_sub(wait),
                                    parent,
                                    spawned_after_ns,
                                    spawn_index,
                                },
                            );
                        }
                    }
                }
                EventKind::Dep { from, to } => g.deps.push((from, to)),
                _ => {}
            }
        }
        for (child, (parent, at, index)) in spawned {
            if let Some(n) = g.tasks.get_mut(&child) {
                n.parent = parent;
                n.spawned_after_ns = at;
                n.spawn_index = index;
            }
        }
        g
    }
}

/// A data-flow task as a trace saw it run.
///
/// ```
/// let rt = taskpools::Runtime::builder().threads(2).trace(1 << 12).build()?;
/// let mut v = [0u64; 2];
/// rt.install(|| {
///     taskpools::dataflow::scope(|df| {
///         let r = df.region(&mut v);
///         df.spawn(r.part(0..1).out(), |_, x| x[0] = 1);
///         df.spawn(r.part(1..2).out(), |_, x| x[0] = 2);
///     })
/// });
/// let g = rt.take_trace()?.unwrap().task_graph();
/// for n in g.tasks.values() {
///     assert!(n.start_ns <= n.end_ns && n.work_ns <= n.end_ns - n.start_ns);
///     assert_eq!(n.parent, g.roots[0]); // both spawned by the root scope
/// }
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskNode {
    /// The worker that ran it.
    pub worker: u32,
    /// When its job started and ended (ns since the runtime started).
    pub start_ns: u64,
    /// See `start_ns`.
    pub end_ns: u64,
    /// Its own work: its duration less the jobs its worker ran nested inside it and less
    /// its waits for its children.
    pub work_ns: u64,
    /// The task or root scope that spawned it (0: the trace does not say).
    pub parent: u64,
    /// The parent's own work before it spawned this task (ns).
    pub spawned_after_ns: u64,
    /// How many children the parent had spawned before this one.
    pub spawn_index: usize,
}

/// The data-flow tasks of a trace and their dependences ([`Trace::task_graph`]).
///
/// ```
/// let rt = taskpools::Runtime::builder().threads(2).trace(1 << 12).build()?;
/// let mut v = [0u64; 3];
/// rt.install(|| {
///     taskpools::dataflow::scope(|df| {
///         let r = df.region(&mut v);
///         df.spawn(r.out(), |_, v| v.fill(1));
///         df.spawn(r.read(), |_, v| assert_eq!(v[0], 1)); // read after write
///         df.spawn(r.read(), |_, v| assert_eq!(v[2], 1));
///     })
/// });
/// let g = rt.take_trace()?.unwrap().task_graph();
/// let first = *g.tasks.keys().next().unwrap();
/// assert_eq!(g.deps.len(), 2);
/// assert!(g.deps.iter().all(|&(from, _)| from == first)); // both readers wait for the writer
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct TaskGraph {
    /// The tasks that ran, by id.
    pub tasks: std::collections::BTreeMap<u64, TaskNode>,
    /// Dependences `(from, to)` between siblings, as spawned.
    pub deps: Vec<(u64, u64)>,
    /// The root scopes (scopes entered outside any data-flow task), in the order they began.
    pub roots: Vec<u64>,
    /// Per root scope, its own work (its code's time less nested jobs and waits) up to its
    /// last spawn, `sync` or wait for its children (ns).
    pub root_work: std::collections::BTreeMap<u64, u64>,
    /// Per task or root scope, each `sync` it returned from: its own work at that point
    /// (ns) and how many children it had spawned before.
    pub syncs: std::collections::BTreeMap<u64, Vec<(u64, usize)>>,
}

/// A time in the ideal schedule and the chain of tasks that decides it (an index into the
/// chain arena, `usize::MAX`: none).
#[derive(Clone, Copy)]
struct Timed {
    t: u64,
    chain: usize,
}

impl TaskGraph {
    /// The critical path (span): the longest chain of work that must run in order, and its
    /// length in ns: its tasks and root scopes in order (a root scope's own work is its
    /// spawning; a task or scope appears again where its own work goes on after a child it
    /// waited for). The chain follows
    /// - a parent's own work up to a spawn into the child (a child starts no earlier than
    ///   its parent spawns it),
    /// - a dependence between siblings into the later one,
    /// - a child's completion into its parent's work after a `sync`, and into the parent's
    ///   completion (a task completes when its children have).
    ///
    /// The length is the finish time of the last root scope with unboundedly many workers
    /// and no overheads, root scopes one after the other (as they are when a program runs
    /// its scopes in sequence; a scope opened inside a data-flow task, or scopes run at the
    /// same time by several threads, are counted as root scopes too, which overstates the
    /// span and, for a scope inside a task, the work). Tasks whose spawn the trace did not
    /// see (dropped events, or a task run without a job of its own) start at time 0,
    /// alongside the root scopes; dependences on tasks it did not see run are left out.
    /// Times add up saturating at `u64::MAX` ns.
    ///
    /// # Errors
    /// [`Error::BadTaskGraph`], naming a task or root scope, if a task is its own ancestor,
    /// a root scope is listed twice or is also a task (a graph read from a corrupt trace
    /// file: the ids a runtime records are unique, and its tasks' parents were spawned
    /// before them).
    ///
    /// ```
    /// let rt = taskpools::Runtime::builder().threads(2).trace(1 << 12).build()?;
    /// let mut v = [0u64; 1];
    /// rt.install(|| {
    ///     taskpools::dataflow::scope(|df| {
    ///         let r = df.region(&mut v);
    ///         (0..3).for_each(|_| df.spawn(r.inout(), |_, v| v[0] += 1));
    ///     })
    /// });
    /// let g = rt.take_trace()?.unwrap().task_graph();
    /// let (path, span) = g.critical_path()?;
    /// assert!(!path.is_empty());
    /// assert!(span <= g.work_ns()); // no schedule beats the span; none needs more than the work
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn critical_path(&self) -> Result<(Vec<u64>, u64), Error> {
        use std::collections::{BTreeMap, HashMap, HashSet};
        let known: HashSet<u64> = self.roots.iter().copied().collect();
        // The parent a task hangs off: its own if the graph knows it, else the synthetic root 0.
        let parent_of = |t: &TaskNode| {
            if self.tasks.contains_key(&t.parent) || known.contains(&t.parent) {
                t.parent
            } else {
                0
            }
        };
        self.check_ids(parent_of)?;
        // Children per parent, in spawn order.
        let mut children: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        for (&id, t) in &self.tasks {
            children.entry(parent_of(t)).or_default().push(id);
        }
        for kids in children.values_mut() {
            kids.sort_by_key(|c| (self.tasks[c].spawn_index, *c));
        }
        let mut preds: HashMap<u64, Vec<u64>> = HashMap::new();
        for &(f, t) in &self.deps {
            if self.tasks.contains_key(&f) && self.tasks.contains_key(&t) && f != t {
                preds.entry(t).or_default().push(f);
            }
        }
        // The chain arena: (task or scope, previous link).
        let mut chain: Vec<(u64, usize)> = Vec::new();
        let mut work = |at: Timed, id: u64, ns: u64| -> Timed {
            if ns == 0 {
                return at;
            }
            let link = match chain.get(at.chain) {
                Some(&(top, _)) if top == id => at.chain,
                _ => {
                    chain.push((id, at.chain));
                    chain.len() - 1
                }
            };
            Timed {
                t: at.t.saturating_add(ns),
                chain: link,
            }
        };
        let later = |a: Timed, b: Timed| if b.t > a.t { b } else { a };
        let none = Timed {
            t: 0,
            chain: usize::MAX,
        };
        let no_syncs = Vec::new();
        // One task or scope being walked (an explicit stack: nesting can be deep).
        struct Walk<'g> {
            id: u64,
            kids: &'g [u64],
            syncs: &'g [(u64, usize)],
            next_sync: usize,
            next_kid: usize,
            cur: Timed,
            done: Timed,
            off: u64,
        }
        let mut fin: HashMap<u64, Timed> = HashMap::new();
        let mut walk_from =
            |root: u64, est: Timed, work: &mut dyn FnMut(Timed, u64, u64) -> Timed| {
                let open = |id: u64, est: Timed| Walk {
                    id,
                    kids: children.get(&id).map_or(&[][..], |v| &v[..]),
                    syncs: self.syncs.get(&id).unwrap_or(&no_syncs),
                    next_sync: 0,
                    next_kid: 0,
                    cur: est,
                    done: est,
                    off: 0,
                };
                let mut stack = vec![open(root, est)];
                let mut returned: Option<Timed> = None;
                loop {
                    let w = stack.last_mut().expect("a walk");
                    if let Some(f) = returned.take() {
                        fin.insert(w.kids[w.next_kid], f);
                        w.done = later(w.done, f);
                        w.next_kid += 1;
                    }
                    if let Some(&c) = w.kids.get(w.next_kid) {
                        let node = &self.tasks[&c];
                        // The parent's syncs before this spawn.
                        while let Some(&(at, _)) =
                            w.syncs.get(w.next_sync).filter(|s| s.1 <= node.spawn_index)
                        {
                            w.cur = work(w.cur, w.id, at.saturating_sub(w.off));
                            w.off = w.off.max(at);
                            w.cur = later(w.cur, w.done);
                            w.next_sync += 1;
                        }
                        // (Tasks of unknown parents start at 0.)
                        let at = if w.id == 0 { 0 } else { node.spawned_after_ns };
                        w.cur = work(w.cur, w.id, at.saturating_sub(w.off));
                        w.off = w.off.max(at);
                        let mut start = w.cur;
                        for p in preds.get(&c).map_or(&[][..], |v| &v[..]) {
                            if let Some(&f) = fin.get(p) {
                                start = later(start, f);
                            }
                        }
                        stack.push(open(c, start));
                        continue;
                    }
                    for &(at, _) in &w.syncs[w.next_sync..] {
                        w.cur = work(w.cur, w.id, at.saturating_sub(w.off));
                        w.off = w.off.max(at);
                        w.cur = later(w.cur, w.done);
                    }
                    let total = match self.tasks.get(&w.id) {
                        Some(t) => t.work_ns,
                        None => self.root_work.get(&w.id).copied().unwrap_or(w.off),
                    };
                    w.cur = work(w.cur, w.id, total.saturating_sub(w.off));
                    let f = later(w.cur, w.done);
                    stack.pop();
                    if stack.is_empty() {
                        return f;
                    }
                    returned = Some(f);
                }
            };
        // Tasks of unknown parents from time 0; the root scopes one after the other.
        let orphans = walk_from(0, none, &mut work);
        let mut t = none;
        for &r in &self.roots {
            t = walk_from(r, t, &mut work);
        }
        let t = later(t, orphans);
        let mut path = Vec::new();
        let mut at = t.chain;
        while let Some(&(id, prev)) = chain.get(at) {
            if id != 0 {
                path.push(id);
            }
            at = prev;
        }
        path.reverse();
        path.dedup();
        Ok((path, t.t))
    }

    /// Checks what the walk of [`critical_path`](Self::critical_path) needs of ids: that
    /// following `parent_of` from any task leads out of the tasks (to a root scope, or to the
    /// synthetic root 0 when no task has id 0) — from a task that is its own ancestor the
    /// walk would descend for ever — and that each root scope is listed once and is no task
    /// (else the walk would go over the same tasks again for each copy). Each task is visited
    /// once.
    fn check_ids(&self, parent_of: impl Fn(&TaskNode) -> u64) -> Result<(), Error> {
        use std::collections::HashSet;
        let bad = |why: String| Err(Error::BadTaskGraph { why });
        // Tasks known to lead out of the tasks.
        let mut out: HashSet<u64> = HashSet::new();
        let mut chain: Vec<u64> = Vec::new();
        let mut on_chain: HashSet<u64> = HashSet::new();
        for &id in self.tasks.keys() {
            let mut at = id;
            while let Some(t) = self.tasks.get(&at) {
                if out.contains(&at) {
                    break;
                }
                if !on_chain.insert(at) {
                    return bad(format!(
                        "task {at} is its own ancestor (a cycle of parents{})",
                        if at == 0 {
                            "; 0 is the id of no task"
                        } else {
                            ""
                        }
                    ));
                }
                chain.push(at);
                at = parent_of(t);
            }
            out.extend(chain.drain(..));
            on_chain.clear();
        }
        let mut roots = HashSet::new();
        for &r in &self.roots {
            if !roots.insert(r) {
                return bad(format!("root scope {r} is listed twice"));
            }
            if self.tasks.contains_key(&r) {
                return bad(format!("task {r} is also a root scope"));
            }
        }
        Ok(())
    }

    /// The work: the tasks' own work and the root scopes' own work (spawning), summed (ns,
    /// saturating at `u64::MAX`). At least the critical path's length.
    ///
    /// ```
    /// let rt = taskpools::Runtime::builder().threads(2).trace(1 << 12).build()?;
    /// let mut v = [0u64; 8];
    /// rt.install(|| {
    ///     taskpools::dataflow::scope(|df| {
    ///         for c in df.region(&mut v).chunks(1) {
    ///             df.spawn(c.out(), |_, c| c[0] = 1);
    ///         }
    ///     })
    /// });
    /// let g = rt.take_trace()?.unwrap().task_graph();
    /// let tasks: u64 = g.tasks.values().map(|t| t.work_ns).sum();
    /// assert!(g.work_ns() >= tasks); // plus the root scope's spawning
    /// assert!(g.work_ns() >= g.critical_path()?.1);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn work_ns(&self) -> u64 {
        self.tasks
            .values()
            .map(|t| t.work_ns)
            .chain(self.root_work.values().copied())
            .fold(0u64, u64::saturating_add)
    }

    /// The graph in Graphviz DOT: a box per task (its worker and own work in µs), an ellipse
    /// per root scope (its own work), an arrow per dependence, a dashed one per spawn (parent to child), the critical path in red
    /// (dotted where it goes from a child back to the parent that waited for it).
    ///
    /// # Errors
    /// As [`critical_path`](Self::critical_path).
    ///
    /// ```
    /// let rt = taskpools::Runtime::builder().threads(2).trace(1 << 12).build()?;
    /// let mut v = [0u64; 1];
    /// rt.install(|| {
    ///     taskpools::dataflow::scope(|df| {
    ///         let r = df.region(&mut v);
    ///         (0..2).for_each(|_| df.spawn(r.inout(), |_, v| v[0] += 1));
    ///     })
    /// });
    /// let dot = rt.take_trace()?.unwrap().task_graph().dot("chain")?;
    /// assert!(dot.starts_with("digraph \"chain\""));
    /// // std::fs::write("chain.dot", dot), then `dot -Tsvg chain.dot`.
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn dot(&self, name: &str) -> Result<String, Error> {
        use std::fmt::Write;
        let (path, len) = self.critical_path()?;
        let on: std::collections::BTreeSet<u64> = path.iter().copied().collect();
        let crit: std::collections::BTreeSet<(u64, u64)> =
            path.windows(2).map(|w| (w[0], w[1])).collect();
        let mut s = String::new();
        let _ = writeln!(
            s,
            "digraph \"{}\" {{\n  label=\"{}: {}, work {:.3} ms, critical path {:.3} ms\";\n  node [shape=box, fontsize=10];",
            name.replace('"', "'"),
            name.replace('"', "'"),
            crate::error::counted(self.tasks.len() as u64, "task"),
            self.work_ns() as f64 / 1e6,
            len as f64 / 1e6
        );
        for (id, w) in &self.root_work {
            let _ = writeln!(
                s,
                "  t{id} [shape=ellipse, label=\"root scope {:.1} us\"{}];",
                *w as f64 / 1e3,
                if on.contains(id) {
                    ", color=red, penwidth=2"
                } else {
                    ""
                }
            );
        }
        for (id, t) in &self.tasks {
            let _ = writeln!(
                s,
                "  t{id} [label=\"w{} {:.1} us\"{}];",
                t.worker,
                t.work_ns as f64 / 1e3,
                if on.contains(id) {
                    ", color=red, penwidth=2"
                } else {
                    ""
                }
            );
        }
        let mut drawn = std::collections::BTreeSet::new();
        for &(f, t) in &self.deps {
            if self.tasks.contains_key(&f) && self.tasks.contains_key(&t) && drawn.insert((f, t)) {
                let _ = writeln!(
                    s,
                    "  t{f} -> t{t}{};",
                    if crit.contains(&(f, t)) {
                        " [color=red, penwidth=2]"
                    } else {
                        ""
                    }
                );
            }
        }
        // Spawns (dashed): a child starts no earlier than its parent spawns it.
        for (&c, t) in &self.tasks {
            let p = t.parent;
            let known = self.tasks.contains_key(&p) || self.root_work.contains_key(&p);
            if known && drawn.insert((p, c)) {
                let _ = writeln!(
                    s,
                    "  t{p} -> t{c} [style=dashed, {}];",
                    if crit.contains(&(p, c)) {
                        "color=red, penwidth=2"
                    } else {
                        "color=grey"
                    }
                );
            }
        }
        // Steps of the critical path that are a child's completion its parent waited for.
        for &(a, b) in &crit {
            if drawn.insert((a, b)) {
                let _ = writeln!(
                    s,
                    "  t{a} -> t{b} [style=dotted, color=red, penwidth=2, label=\"waited\"];"
                );
            }
        }
        s.push_str("}\n");
        Ok(s)
    }
}

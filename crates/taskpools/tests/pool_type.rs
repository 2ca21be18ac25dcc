//! The pool named at compile time (`Builder::pool_type`) is the pool named at run time: for
//! every kind, the same pool type, every task run exactly once on both paths with the same
//! counts, and the same errors for bad input.
#![cfg(not(loom))]

use std::any::type_name;

use taskpools::places::{PlaceId, Places};
use taskpools::pool::types::*;
use taskpools::pool::{PoolConfig, PoolType, PoolVisitor};
use taskpools::{Builder, Ctx, Error, PoolKind, RunReport, Runtime, Task, TaskPool, TypedBuilder};

/// Node `id` of a tree over `0..N` with children `2 id + 1` and `2 id + 2`; records its id in
/// the worker's state. In a hinted phase, child `c` is hinted to place `c mod places`.
struct Node(u32);

const N: u32 = 3_000;

impl Task<Vec<u32>> for Node {
    fn run(self, ctx: &mut Ctx<'_, Self, Vec<u32>>) {
        ctx.local().push(self.0);
        for c in [2 * self.0 + 1, 2 * self.0 + 2] {
            if c >= N {
                continue;
            }
            match ctx.places() {
                0 => ctx.put(Node(c)),
                p => ctx.put_at(PlaceId(c as usize % p), Node(c)).unwrap(),
            }
        }
    }
}

/// A task without state or children.
struct Leaf;

impl Task for Leaf {
    fn run(self, _: &mut Ctx<'_, Self>) {}
}

/// Checks that every node ran exactly once; returns the report.
fn every_node_once(what: &str, run: Result<(RunReport, Vec<Vec<u32>>), Error>) -> RunReport {
    let (report, ran) = run.unwrap_or_else(|e| panic!("{what}: {e}"));
    let mut all: Vec<u32> = ran.into_iter().flatten().collect();
    all.sort_unstable();
    assert!(
        all.iter().copied().eq(0..N),
        "{what}: tasks lost or doubled"
    );
    assert_eq!(report.tasks_run(), u64::from(N), "{what}");
    report
}

/// Something to do for each pool type.
trait EachType {
    fn each<P: PoolType>(&mut self);
}

/// Calls `e` for every type of `taskpools::pool::types`.
fn all_types(e: &mut impl EachType) {
    e.each::<CentralList>();
    e.each::<CentralArray>();
    e.each::<CentralFifo>();
    e.each::<CentralFifoNodeLocks>();
    e.each::<Randomized>();
    e.each::<DistributedList>();
    e.each::<DistributedArray>();
    e.each::<StealWorkingEnd>();
    e.each::<StealRandomizedLocal>();
    e.each::<StealOppositeEnd>();
    e.each::<StealOppositeEndNodeLocks>();
    e.each::<StealArray>();
    e.each::<PrivatePublic>();
    e.each::<PrivatePublicGreedy>();
    e.each::<Combined>();
    e.each::<ChaseLev>();
    e.each::<Fcdq>();
    e.each::<PrivateDeque>();
    e.each::<StealHalf>();
}

#[test]
fn every_kind_has_one_type() {
    struct Kinds(Vec<PoolKind>);
    impl EachType for Kinds {
        fn each<P: PoolType>(&mut self) {
            self.0.push(P::KIND);
        }
    }
    let mut k = Kinds(Vec::new());
    all_types(&mut k);
    assert_eq!(
        k.0,
        PoolKind::ALL,
        "one type per kind, in the order of PoolKind::ALL"
    );
}

#[test]
fn each_type_is_the_pool_its_kind_builds() {
    struct Name;
    impl<T: Send> PoolVisitor<T> for Name {
        type Output = &'static str;
        fn visit<Q: TaskPool<T>>(self, _: Q) -> &'static str {
            type_name::<Q>()
        }
    }
    struct Same;
    impl EachType for Same {
        fn each<P: PoolType>(&mut self) {
            let by_kind = P::KIND.with_pool::<Node, _>(&PoolConfig::new(2), Name);
            assert_eq!(type_name::<P::Pool<Node>>(), by_kind, "{:?}", P::KIND);
        }
    }
    all_types(&mut Same);
}

#[test]
fn every_pool_type_runs_every_task_once_as_its_kind_does() {
    struct Same;
    impl EachType for Same {
        fn each<P: PoolType>(&mut self) {
            let kind = P::KIND;
            for threads in [1, 3] {
                let by_kind = Builder::new().threads(threads).pool(kind);
                let by_type = Builder::new().threads(threads).pool_type::<P>();
                assert_eq!(by_type.pool_kind(), kind);
                assert_eq!(by_type.thread_count(), threads);
                assert_eq!(format!("{by_kind:?}"), format!("{:?}", by_type.builder()));
                let what = format!("{kind} x{threads}");
                let a = every_node_once(
                    &format!("{what} by kind"),
                    by_kind.run_with(|_| Vec::new(), [Node(0)]),
                );
                let b = every_node_once(
                    &format!("{what} by type"),
                    by_type.run_with(|_| Vec::new(), [Node(0)]),
                );
                assert_eq!(a.workers.len(), b.workers.len(), "{what}");
                assert_eq!(a.total().puts, b.total().puts, "{what}");
                let (_, n) = by_type
                    .run_reduce(
                        |_| Vec::new(),
                        [Node(0)],
                        |mut x, y| {
                            x.extend(y);
                            x
                        },
                    )
                    .unwrap();
                assert_eq!(n.len(), N as usize, "{what} run_reduce");
            }
        }
    }
    all_types(&mut Same);
}

/// The hinted phase by kind is checked for every kind in tests/places_phase.rs; by type, for
/// three (a hinted phase by kind here would compile nineteen more loops into this test).
#[test]
fn hinted_phases_run_every_task_once_by_type() {
    let rt = Runtime::builder()
        .places(Places::uniform(2, 1).unwrap())
        .build()
        .unwrap();
    fn by_type<P: PoolType>(rt: &Runtime) {
        let b = Builder::new().pool_type::<P>().runtime(rt);
        let report = every_node_once(
            &format!("{} hinted by type", P::KIND),
            b.run_hinted_with(|_| Vec::new(), [Node(0)]),
        );
        assert_eq!(report.workers.len(), 2);
        assert_eq!(report.total().puts, u64::from(N) - 1, "{}", P::KIND);
    }
    by_type::<CentralList>(&rt);
    by_type::<ChaseLev>(&rt);
    by_type::<PrivateDeque>(&rt);
}

#[test]
fn bad_input_is_the_same_error_by_type() {
    let by_kind = |b: Builder<'_>| {
        let r = b.run_with(|_| Vec::new(), [Node(N - 1)]);
        r.map(|_| ()).unwrap_err().to_string()
    };
    let by_type = |b: TypedBuilder<'_, ChaseLev>| {
        let r = b.run_with(|_| Vec::new(), [Node(N - 1)]);
        r.map(|_| ()).unwrap_err().to_string()
    };
    let dynamic = Builder::new().pool(PoolKind::ChaseLev);
    let typed = Builder::new().pool_type::<ChaseLev>();
    let many = taskpools::MAX_THREADS + 1;
    let rt = Runtime::new(2).unwrap();
    for (what, a, b) in [
        ("zero threads", dynamic.threads(0), typed.threads(0)),
        (
            "too many threads",
            dynamic.threads(many),
            typed.threads(many),
        ),
        (
            "wider than the runtime",
            dynamic.threads(3).runtime(&rt),
            typed.threads(3).runtime(&rt),
        ),
    ] {
        assert_eq!(by_kind(a), by_type(b), "{what}");
    }
    assert!(matches!(
        typed.threads(0).run([Leaf]),
        Err(Error::ZeroThreads)
    ));
    // The hinted phase by kind gives this error in tests/places_phase.rs.
    assert!(matches!(
        typed.runtime(&rt).run_hinted([Leaf]),
        Err(Error::PhaseWithoutPlaces)
    ));
    assert_eq!(typed.runtime(&rt).run([Leaf, Leaf]).unwrap().tasks_run(), 2);
    assert!(typed.mem_name("no-such-manager").is_err());
}

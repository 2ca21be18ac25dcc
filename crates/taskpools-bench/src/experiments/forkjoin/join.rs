//! The `join`s the kernels are instantiated with: ours, rayon's, and the baselines without a
//! runtime (sequential, plain calls, counting), behind one static trait.

/// A `join` implementation to run the kernels with, for runtimes whose `join` takes plain
/// closures (ours, rayon, and the baselines). Static (no `self`), so that a kernel compiles to
/// the same code a user would write with that runtime's `join` directly.
pub(super) trait Join {
    fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send;
}

pub(super) struct Ours;
impl Join for Ours {
    #[inline]
    fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        taskpools::forkjoin::join(a, b)
    }
}

pub(super) struct Rayon;
impl Join for Rayon {
    #[inline]
    fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        rayon::join(a, b)
    }
}

/// Runs both halves here, one after the other (the sequential baseline).
pub(super) struct Seq;
impl Join for Seq {
    #[inline]
    fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        (a(), b())
    }
}

/// Runs each half as an ordinary call that the compiler may not inline, and nothing else:
/// the `calls` row, a reference for a `join` whose halves are closures it calls (a join whose
/// halves the compiler inlines, as our serial elision's can be, may cost less). Against the
/// sequential code it prices what is lost when the halves cannot be merged into the caller
/// (the sequential fib's second call becomes a loop, for instance).
pub(super) struct Calls;
impl Join for Calls {
    #[inline]
    fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        let ra = call(a);
        (ra, call(b))
    }
}

#[inline(never)]
fn call<R>(f: impl FnOnce() -> R) -> R {
    f()
}

thread_local! {
    pub(super) static JOINS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Runs both halves here and counts the joins (to compute ns per join).
pub(super) struct Counting;
impl Join for Counting {
    #[inline]
    fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        JOINS.with(|c| c.set(c.get() + 1));
        (a(), b())
    }
}

/// The context a kernel passes down its recursion when its runtime's `join` needs none.
#[derive(Clone, Copy)]
pub(super) struct Nil;

/// `J::join` for kernels written with a context: each half gets [`Nil`].
#[inline(always)]
pub(super) fn join_nil<J: Join, A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce(Nil) -> RA + Send,
    B: FnOnce(Nil) -> RB + Send,
    RA: Send,
    RB: Send,
{
    J::join(move || a(Nil), move || b(Nil))
}

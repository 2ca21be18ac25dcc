//! The access kinds beyond `in`/`out`/`inout` that OmpSs-2 and OpenMP 5 offer: `concurrent`
//! (OpenMP 5.1's `inoutset`) and `commutative` (OpenMP's `mutexinoutset`), on parts, whole
//! regions and sub-matrices.
//!
//! Both are ordered against every other kind on the same data, like a write: after what came
//! before them, before what comes after. Among themselves:
//!
//! - **concurrent** accesses to the same data may run at the same time. The task gets a
//!   shared view (`&[T]`, [`TileRef`](crate::dataflow::TileRef)), so it updates through
//!   atomics or locks of its own: what the runtime promises is that no read, `out`, `inout`
//!   or commutative access to that data runs meanwhile. Use it for accumulations the task
//!   can do with atomic adds.
//! - **commutative** accesses to the same data run one at a time, in whatever order they
//!   become ready, not in the order they were spawned. The task gets `&mut`; the runtime
//!   takes a lock per group of commutative accesses before the task starts (a task whose
//!   lock is held is set aside, never blocking a worker). Use it for updates that commute,
//!   such as adding into a histogram or an accumulator.
//!
//! OpenMP's `mutexinoutset` has the rules of `commutative` here, and 5.1's `inoutset` those
//! of `concurrent`. A task that is cancelled (after a failed predecessor) takes no lock; a
//! task that panics gives its locks back, and its commutative siblings still run (they do
//! not depend on it), while what comes after the group is cancelled.

use std::marker::PhantomData;

use super::{Elem, ElemRead, ElemWrite, Part, Read, Region, Sub, TileRead, TileWrite, Write};
use crate::dataflow::footprint::Mode;

impl<'s, T> Region<'s, T> {
    /// Declares a `concurrent` access to the whole region (see [`Part::concurrent`]).
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut hits: Vec<AtomicU64> = (0..4).map(|_| AtomicU64::new(0)).collect();
    /// taskpools::dataflow::scope(|df| {
    ///     let h = df.region(&mut hits);
    ///     for i in 0..8 {
    ///         // All eight may run at once: they add atomically.
    ///         df.spawn(h.concurrent(), move |_, h| { h[i % 4].fetch_add(1, Ordering::Relaxed); });
    ///     }
    ///     // Waits for all eight.
    ///     df.spawn(h.read(), |_, h| assert_eq!(h[0].load(Ordering::Relaxed), 2));
    /// });
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn concurrent(&self) -> Read<'s, T> {
        self.all().concurrent()
    }

    /// Declares a `commutative` access to the whole region (see [`Part::commutative`]).
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut total = [0u64];
    /// taskpools::dataflow::scope(|df| {
    ///     let t = df.region(&mut total);
    ///     for i in 1..=10 {
    ///         // One at a time, in any order.
    ///         df.spawn(t.commutative(), move |_, t| t[0] += i);
    ///     }
    /// });
    /// assert_eq!(total, [55]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn commutative(&self) -> Write<'s, T> {
        self.all().commutative()
    }
}

impl<'s, T> Part<'s, T> {
    /// Declares a `concurrent` access (OmpSs-2's `concurrent`, OpenMP 5.1's `inoutset`): the
    /// task gets `&[T]` and may run together with other concurrent accesses to the same
    /// data, but with no read, write or commutative access to it. It changes the data
    /// through atomics (or other interior mutability) of its own.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut bins: Vec<AtomicU32> = (0..8).map(|_| AtomicU32::new(0)).collect();
    /// let mut seen = [0u32];
    /// taskpools::dataflow::scope(|df| {
    ///     let (b, s) = (df.region(&mut bins), df.region(&mut seen));
    ///     df.spawn(b.out(), |_, b| b.iter_mut().for_each(|x| *x.get_mut() = 10));
    ///     for k in 0..16u32 {
    ///         df.spawn(b.part(0..4).concurrent(), move |_, b| {
    ///             b[(k % 4) as usize].fetch_add(1, Ordering::Relaxed);
    ///         });
    ///     }
    ///     // After the write and before the adds: a read is ordered against them.
    ///     df.spawn((b.part(0..4).read(), s.out()), |_, (b, s)| {
    ///         s[0] = b.iter().map(|x| x.load(Ordering::Relaxed)).sum();
    ///     });
    /// });
    /// assert_eq!(seen, [4 * 10 + 16]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn concurrent(self) -> Read<'s, T> {
        self.span.concurrent()
    }

    /// Declares a `commutative` access (OmpSs-2's `commutative`, OpenMP's
    /// `mutexinoutset`): the task gets `&mut [T]`; it runs alone on that data, like
    /// `inout`, but commutative accesses to the same data run in whatever order they become
    /// ready, not in spawn order.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// // A histogram: each task counts one chunk of the input into the shared bins.
    /// let input: Vec<u8> = (0..=255).cycle().take(4096).collect();
    /// let mut bins = vec![0u32; 4];
    /// taskpools::dataflow::scope(|df| {
    ///     let b = df.region(&mut bins);
    ///     for chunk in input.chunks(512) {
    ///         df.spawn(b.part(0..4).commutative(), move |_, b| {
    ///             chunk.iter().for_each(|&x| b[usize::from(x / 64)] += 1);
    ///         });
    ///     }
    /// });
    /// assert_eq!(bins, [1024; 4]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn commutative(self) -> Write<'s, T> {
        self.span.commutative()
    }
}

impl<'s, T> Sub<'s, T> {
    /// Declares a `concurrent` access to the sub-matrix (see [`Part::concurrent`]): the task
    /// gets a [`TileRef`](crate::dataflow::TileRef).
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut m: Vec<AtomicU32> = (0..16).map(|_| AtomicU32::new(0)).collect();
    /// taskpools::dataflow::scope(|df| {
    ///     let a = df.region(&mut m).matrix(4, 4);
    ///     for _ in 0..3 {
    ///         df.spawn(a.tile(1, 1, 2).concurrent(), |_, t| {
    ///             t[(0, 0)].fetch_add(1, Ordering::Relaxed);
    ///         });
    ///     }
    /// });
    /// assert_eq!(m[10].load(Ordering::Relaxed), 3);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn concurrent(self) -> TileRead<'s, T> {
        self.block.concurrent()
    }

    /// Declares a `commutative` access to the sub-matrix (see [`Part::commutative`]): the
    /// task gets a [`TileMut`](crate::dataflow::TileMut).
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut m = vec![0u32; 16];
    /// taskpools::dataflow::scope(|df| {
    ///     let a = df.region(&mut m).matrix(4, 4);
    ///     for k in 1..=4 {
    ///         df.spawn(a.tile(0, 1, 2).commutative(), move |_, mut t| t[(1, 1)] += k);
    ///     }
    /// });
    /// assert_eq!(m[7], 10);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn commutative(self) -> TileWrite<'s, T> {
        self.block.commutative()
    }
}

impl<'s, T> Elem<'s, T> {
    /// Declares a `concurrent` access to the element (see [`Part::concurrent`]): the task
    /// gets `&T`.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut counters: Vec<AtomicU64> = (0..2).map(|_| AtomicU64::new(0)).collect();
    /// taskpools::dataflow::scope(|df| {
    ///     let c = df.region(&mut counters);
    ///     for _ in 0..5 {
    ///         df.spawn(c.at(1).concurrent(), |_, x: &AtomicU64| {
    ///             x.fetch_add(1, Ordering::Relaxed);
    ///         });
    ///     }
    /// });
    /// assert_eq!(counters[1].load(Ordering::Relaxed), 5);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn concurrent(self) -> ElemRead<'s, T> {
        ElemRead {
            fp: self.span.footprint(Mode::Concurrent),
            ptr: self.span.ptr,
            marker: PhantomData,
        }
    }

    /// Declares a `commutative` access to the element (see [`Part::commutative`]): the task
    /// gets `&mut T`.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// let mut sums = vec![0u64; 2];
    /// taskpools::dataflow::scope(|df| {
    ///     let s = df.region(&mut sums);
    ///     for k in 1..=4 {
    ///         df.spawn(s.at(0).commutative(), move |_, x: &mut u64| *x += k);
    ///     }
    /// });
    /// assert_eq!(sums, [10, 0]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn commutative(self) -> ElemWrite<'s, T> {
        ElemWrite {
            fp: self.span.footprint(Mode::Commutative),
            ptr: self.span.ptr,
            marker: PhantomData,
        }
    }
}

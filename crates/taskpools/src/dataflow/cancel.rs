//! Stopping a data-flow scope early (OpenMP's `cancel taskgroup`): [`Scope::cancel`] and
//! [`Scope::try_spawn`]. The stop state is the root scope's (`crate::cancel`), shared by
//! every nested task; a task checks it just before it starts (`task::run_task`, with
//! [`skips`]). A skipped task still completes, so its successors are readied and skip in
//! turn; it counts itself skipped before it completes. Loom model: `cancel/loom_models.rs`.

use super::frame::Shared;
use super::{Accesses, Scope};
use crate::cancel::{BoxError, Stop};

#[cfg(all(test, loom))]
mod loom_models;

/// Whether a task about to start skips its closure: a predecessor failed (`cancelled`), or
/// the scope was stopped. A wait's task is the spawner's own code, which goes on
/// (`Scope::wait_for`). Checked just before the start, not at the spawn: a task readied by
/// a predecessor that cancelled must see that cancel.
#[inline]
pub(super) fn skips(cancelled: bool, wait: bool, stop: &Stop) -> bool {
    cancelled || (!wait && stop.is_stopped())
}

impl<'s, 'e> Scope<'s, 'e> {
    /// The root scope's shared state (a leaf task that only polls makes no frame).
    fn shared(&self) -> &Shared {
        // SAFETY: a scope is handed out only by reference while its frame is alive.
        unsafe { &*self.frame }.shared()
    }

    /// Cancels the whole data-flow scope, nested tasks included: every task of it that has
    /// not started yet is skipped (its closure dropped unrun; its successors are readied and
    /// skip in turn), including tasks spawned after this call. Running tasks go on; they may
    /// poll [`is_cancelled`](Self::is_cancelled) to end early. A [`wait_for`](Self::wait_for)
    /// still hands its data to the spawner, as it stands: some of the tasks it waited for may
    /// have been skipped. A `dataflow::scope` opened inside a task is a root scope of its own,
    /// which this does not reach.
    ///
    /// [`scope`](super::scope()) then returns its closure's value; [`try_scope`](super::try_scope)
    /// returns [`Cause::Cancelled`](crate::Cause::Cancelled) with the number of skipped
    /// tasks.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// use taskpools::dataflow::{self, Config};
    ///
    /// // Iterate until converged: each step depends on the one before; the step that
    /// // converges cancels the rest.
    /// let mut x = [100.0f64];
    /// let e = dataflow::try_scope(Config::default(), |df| {
    ///     let r = df.region(&mut x);
    ///     for _ in 0..1000 {
    ///         df.spawn(r.at(0).inout(), |df, x| {
    ///             *x /= 2.0;
    ///             if *x < 1.0 {
    ///                 df.cancel();
    ///             }
    ///         });
    ///     }
    /// })
    /// .unwrap_err();
    /// assert!(e.is_cancelled());
    /// assert_eq!(e.skipped, 1000 - 7); // 100 / 2^7 < 1
    /// assert_eq!(x[0], 100.0 / 128.0);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn cancel(&self) {
        self.shared().stop.cancel();
    }

    /// Whether the scope was cancelled, or a [`try_spawn`](Self::try_spawn) task failed: a
    /// long task may poll this to stop early.
    pub fn is_cancelled(&self) -> bool {
        self.shared().stop.is_stopped()
    }

    /// [`spawn`](Self::spawn) for a task that may fail: if `f` returns an error, the scope
    /// keeps the first one and is cancelled ([`cancel`](Self::cancel)).
    /// [`try_scope`](super::try_scope) returns the error; [`scope`](super::scope()) panics with
    /// its message.
    ///
    /// ```
    /// # let rt = taskpools::Runtime::new(2)?;
    /// # rt.install(|| {
    /// use taskpools::dataflow::{self, Config};
    ///
    /// let text = ["3", "4", "five", "6"];
    /// let mut nums = [0u32; 4];
    /// let mut sum = [0u32];
    /// let e = dataflow::try_scope(Config::default(), |df| {
    ///     let (n, s) = (df.region(&mut nums), df.region(&mut sum));
    ///     for (i, t) in text.into_iter().enumerate() {
    ///         df.try_spawn(n.at(i).out(), move |_, n| {
    ///             *n = t.parse::<u32>()?;
    ///             Ok::<(), std::num::ParseIntError>(())
    ///         });
    ///     }
    ///     // Depends on every parse, one of which fails: it never runs.
    ///     df.spawn((n.read(), s.at(0).out()), |_, (n, s)| *s = n.iter().sum());
    /// })
    /// .unwrap_err();
    /// assert_eq!(e.error().unwrap().to_string(), "invalid digit found in string");
    /// assert_eq!(sum, [0]);
    /// # });
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn try_spawn<A, F, E>(&self, accesses: A, f: F)
    where
        A: Accesses,
        F: for<'t> FnOnce(&'t Scope<'t, 's>, A::Data<'t>) -> Result<(), E> + Send + 's,
        E: Into<BoxError>,
    {
        self.spawn(accesses, move |df, data| {
            if let Err(e) = f(df, data) {
                df.shared().stop.fail(e.into());
            }
        });
    }
}

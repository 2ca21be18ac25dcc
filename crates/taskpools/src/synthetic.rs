//! The synthetic algorithm of Korch and Rauber, "A Comparison of Task Pools for Dynamic Load
//! Balancing of Irregular Algorithms" (2002), §7.2: one task type `A(i)` with
//!
//! ```text
//! A(i) -> {100f}                                   for i <= 0
//! A(i) -> {10f} A(i-2) {50f} A(i-1) {100f}          for i > 0
//! ```
//!
//! where `{n}` is n units of simulated computation and `A(j)` creates a child task. The
//! initialization phase creates `A(k-1), …, A(0)`. The total number of tasks is `P(k)`
//! (Table 4: P(15) = 5 149, P(20) = 57 290, P(25) = 635 593, P(32) = 18 454 894).

use std::hint::black_box;

use crate::{Builder, Ctx, Error, RunReport, Task};

/// One unit of simulated work is one step `x = (x ^ (x >> 7)) + C` of a dependency chain
/// (about 3 cycles). The step is not affine, so the optimizer cannot fold several steps into
/// one (it does exactly that to a linear congruential step), and the result goes through
/// `black_box`, so the loop can be neither removed nor shortened.
///
/// ```
/// use taskpools::synthetic::work;
///
/// // One unit is one step `x = (x ^ (x >> 7)) + C` from `x = units`.
/// assert_eq!(work(0), 0);
/// assert_eq!(work(1), 1 + 0x9e37_79b9_7f4a_7c15);
/// ```
#[inline(never)]
pub fn work(units: u64) -> u64 {
    let mut x = black_box(units);
    for _ in 0..units {
        x = (x ^ (x >> 7)).wrapping_add(0x9e37_79b9_7f4a_7c15);
    }
    black_box(x)
}

/// The task `A(i)` with work factor `f`.
///
/// ```
/// use taskpools::synthetic::A;
/// use taskpools::Builder;
///
/// // A(3) creates A(1) and A(2), and so on down to A(0) and A(-1).
/// let report = Builder::new().threads(2).run([A { i: 3, f: 1 }])?;
/// assert_eq!(report.tasks_run(), 9); // T(3) = 1 + T(2) + T(1) = 1 + 5 + 3
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
#[cfg_attr(feature = "mpi", derive(serde::Serialize, serde::Deserialize))]
pub struct A {
    /// The argument `i`.
    pub i: i32,
    /// The work factor `f`.
    pub f: u32,
}

impl Task for A {
    #[inline]
    fn run(self, ctx: &mut Ctx<'_, Self>) {
        let f = u64::from(self.f);
        if self.i <= 0 {
            work(100 * f);
        } else {
            work(10 * f);
            ctx.put(A {
                i: self.i - 2,
                f: self.f,
            });
            work(50 * f);
            ctx.put(A {
                i: self.i - 1,
                f: self.f,
            });
            work(100 * f);
        }
    }
}

/// The initial tasks `A(k-1), …, A(0)`, in the order Korch and Rauber create them.
///
/// ```
/// use taskpools::synthetic::initial_tasks;
///
/// let init = initial_tasks(3, 5);
/// assert_eq!(init.iter().map(|a| a.i).collect::<Vec<_>>(), [2, 1, 0]);
/// assert!(init.iter().all(|a| a.f == 5));
/// ```
pub fn initial_tasks(k: u32, f: u32) -> Vec<A> {
    (0..k as i32).rev().map(|i| A { i, f }).collect()
}

/// `P(k)`: the number of tasks the algorithm executes for argument `k`.
///
/// # Panics
///
/// If `P(k)` does not fit in a `u64` (`k` ≥ 90); see [`checked_task_count`].
///
/// ```
/// use taskpools::synthetic::task_count;
///
/// // Korch and Rauber's Table 4.
/// assert_eq!(task_count(15), 5_149);
/// assert_eq!(task_count(20), 57_290);
/// ```
pub fn task_count(k: u32) -> u64 {
    checked_task_count(k).expect("P(k) overflows u64 (k >= 90)")
}

/// `P(k)`, or `None` where it does not fit in a `u64` (from `k = 90` on: `P(k)` grows about
/// ×1.6 per step of `k`).
///
/// ```
/// use taskpools::synthetic::checked_task_count;
///
/// assert_eq!(checked_task_count(25), Some(635_593));
/// assert_eq!(checked_task_count(90), None); // more than a u64 holds
/// ```
pub fn checked_task_count(k: u32) -> Option<u64> {
    // T(i): tasks in the subtree of A(i); T(i) = 1 for i <= 0, 1 + T(i-1) + T(i-2) otherwise.
    let (mut t_prev, mut t) = (1u64, 1u64); // T(-1), T(0)
    let mut total = 0u64;
    for i in 0..k {
        if i > 0 {
            let next = t.checked_add(t_prev)?.checked_add(1)?;
            t_prev = t;
            t = next;
        }
        total = total.checked_add(t)?;
    }
    Some(total)
}

/// The algorithm without any pool: the same work in depth-first order on the calling thread.
/// Returns the number of tasks executed (equal to `P(k)`).
///
/// ```
/// use taskpools::synthetic::{sequential, task_count};
///
/// assert_eq!(sequential(12, 1), task_count(12));
/// ```
pub fn sequential(k: u32, f: u32) -> u64 {
    fn a(i: i32, f: u64) -> u64 {
        if i <= 0 {
            work(100 * f);
            1
        } else {
            work(10 * f);
            work(50 * f);
            work(100 * f);
            1 + a(i - 1, f) + a(i - 2, f)
        }
    }
    (0..k as i32).rev().map(|i| a(i, u64::from(f))).sum()
}

/// The most tasks a run may execute: `P(k)` at most 2^30 (`k` ≤ 40).
pub const MAX_TASKS: u64 = 1 << 30;

/// The most work units a run may do, `160·f·P(k)` at most 2^42 (about an hour sequentially
/// at 0.8 ns per unit).
pub const MAX_UNITS: u64 = 1 << 42;

/// Checks that `A` with `k`, `f` can finish: `P(k)` ≤ [`MAX_TASKS`] and its work at most
/// [`MAX_UNITS`]; else [`Error::TooLarge`] naming the limit.
///
/// ```
/// use taskpools::synthetic::check_size;
/// use taskpools::Error;
///
/// assert!(check_size(20, 1).is_ok());
/// assert!(matches!(check_size(60, 1), Err(Error::TooLarge { .. }))); // P(60) > 2^30 tasks
/// ```
pub fn check_size(k: u32, f: u32) -> Result<(), Error> {
    let tasks = checked_task_count(k).filter(|&n| n <= MAX_TASKS);
    let Some(tasks) = tasks else {
        return Err(Error::TooLarge {
            what: format!("k = {k} (A(k) runs P(k) tasks)"),
            limit: "P(k) = 2^30 tasks (k at most 40)".into(),
        });
    };
    let units = tasks.saturating_mul(160).saturating_mul(u64::from(f));
    if units > MAX_UNITS {
        return Err(Error::TooLarge {
            what: format!("k = {k}, f = {f} (up to 160·f·P(k) = {units} work units)"),
            limit: "2^42 work units (about an hour sequentially)".into(),
        });
    }
    Ok(())
}

/// Runs `A` with parameters `k`, `f` on the configured pool and checks that exactly `P(k)`
/// tasks ran; a different count is an [`Error::TaskCount`]. Sizes that cannot finish are
/// refused first ([`check_size`]).
///
/// ```
/// use taskpools::synthetic::{run, task_count};
/// use taskpools::Builder;
///
/// let b = Builder::new().threads(2).pool_name("dq8")?;
/// let report = run(&b, 12, 1)?; // checks that exactly P(12) tasks ran
/// assert_eq!(report.tasks_run(), task_count(12));
/// # Ok::<(), taskpools::Error>(())
/// ```
pub fn run(builder: &Builder, k: u32, f: u32) -> Result<RunReport, Error> {
    check_size(k, f)?;
    let report = builder.run(initial_tasks(k, f))?;
    let expected = task_count(k);
    let actual = report.tasks_run();
    if actual != expected {
        return Err(Error::TaskCount { expected, actual });
    }
    Ok(report)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn table_4_task_counts() {
        assert_eq!(task_count(15), 5_149);
        assert_eq!(task_count(20), 57_290);
        assert_eq!(task_count(25), 635_593);
        assert_eq!(task_count(30), 7_049_122);
        assert_eq!(checked_task_count(30), Some(7_049_122));
        assert!(checked_task_count(89).is_some());
        assert_eq!(checked_task_count(90), None);
        assert_eq!(checked_task_count(u32::MAX), None);
        assert_eq!(task_count(31), 11_405_739);
        assert_eq!(task_count(32), 18_454_894);
        assert_eq!(task_count(33), 29_860_667);
        assert_eq!(task_count(34), 48_315_596);
    }

    #[test]
    fn sizes_that_cannot_finish_are_refused() {
        assert!(check_size(40, 6).is_ok());
        assert!(check_size(40, 40).is_err());
        assert!(check_size(41, 1).is_err());
        assert!(check_size(u32::MAX, 1).is_err());
        assert!(check_size(30, u32::MAX).is_err());
        let e = run(&Builder::new().threads(1), 64, 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("2^30"), "{e}");
    }

    #[test]
    fn sequential_runs_p_k_tasks() {
        assert_eq!(sequential(15, 0), 5_149);
    }
}

//! Lock-based deque baselines for the deque comparison (Papakonstantinou, PARTEE (2015),
//! Table 3.1): a `VecDeque` behind a `std::sync::Mutex` and behind a [`SpinLock`]. The owner
//! pushes and pops at the back, thieves take from the front. With a capacity limit, a push to
//! a full deque fails like PARTEE's fixed-size deques.

use std::collections::VecDeque;

use super::spin::SpinLock;
use crate::sync::{lock, Mutex};

/// `Mutex<VecDeque<T>>` with an optional capacity limit.
pub struct MutexDeque<T> {
    q: Mutex<VecDeque<T>>,
    cap: usize,
}

/// A `VecDeque<T>` behind a spin lock, with an optional capacity limit.
pub struct SpinDeque<T> {
    q: SpinLock<VecDeque<T>>,
    cap: usize,
}

macro_rules! locked_deque {
    ($ty:ident, $lock:expr, $guard:ident) => {
        impl<T> $ty<T> {
            /// A deque holding at most `cap` elements (`usize::MAX`: unbounded).
            pub fn new(cap: usize) -> Self {
                $ty {
                    q: $lock(VecDeque::with_capacity(cap.min(1024))),
                    cap,
                }
            }

            /// Owner: pushes at the back; gives the value back if full.
            pub fn push(&self, v: T) -> Result<(), T> {
                let mut q = $guard(&self.q);
                if q.len() >= self.cap {
                    return Err(v);
                }
                q.push_back(v);
                Ok(())
            }

            /// Owner: pops the newest element.
            pub fn pop(&self) -> Option<T> {
                $guard(&self.q).pop_back()
            }

            /// Thief: takes the oldest element.
            pub fn steal(&self) -> Option<T> {
                $guard(&self.q).pop_front()
            }

            /// Number of elements.
            pub fn len(&self) -> usize {
                $guard(&self.q).len()
            }

            /// Whether the deque is empty.
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }
        }
    };
}

fn spin_guard<T>(l: &SpinLock<T>) -> super::spin::SpinGuard<'_, T> {
    l.lock()
}

locked_deque!(MutexDeque, Mutex::new, lock);
locked_deque!(SpinDeque, SpinLock::new, spin_guard);

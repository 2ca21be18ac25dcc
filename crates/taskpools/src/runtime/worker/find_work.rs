//! Where a worker finds work beyond its own deque: the job addressed to it, its place's
//! deque and other places' (as the place policy allows), other workers' deques (stealing),
//! and the injector.

use super::{LocalDeque, WorkerThread};
use crate::queue::chase_lev::Steal;
use crate::runtime::job::JobRef;
use crate::runtime::liveness::StallWatch;
use crate::runtime::Stealers;

impl WorkerThread {
    /// A task from this worker's own place's deque (newest first), counted.
    #[inline]
    pub(super) fn pop_place(&self) -> Option<JobRef> {
        if !self.has_places {
            return None;
        }
        let ps = self.registry.places.as_ref()?;
        let j = ps.deques[self.place].pop();
        if j.is_some() {
            self.registry.counters[self.index].place_local();
            self.note(super::trace::Source::Place);
        }
        j
    }

    /// A task from another place: a random victim place first, then the others in turn,
    /// oldest task first, as the policy allows (see [`PlacePolicy`]). With steal-half, the
    /// other tasks taken go onto this worker's place.
    ///
    /// [`PlacePolicy`]: crate::places::PlacePolicy
    pub(super) fn steal_places(&self) -> Option<JobRef> {
        use crate::runtime::places::Take;
        if !self.has_places {
            return None;
        }
        let ps = self.registry.places.as_ref()?;
        let n = ps.len();
        if n < 2 {
            return None;
        }
        let policy = &ps.policy;
        let idle_long_enough = || {
            if !policy.guards_hints() {
                return true;
            }
            let since = match self.idle_since.get() {
                Some(t) => t,
                None => {
                    let t = std::time::Instant::now();
                    self.idle_since.set(Some(t));
                    t
                }
            };
            since.elapsed() >= policy.remote_delay
        };
        let allow = |len: usize| len > policy.remote_backlog || idle_long_enough();
        let start = self.next_victim() % n;
        let counters = &self.registry.counters[self.index];
        for k in 0..n {
            let v = (start + k) % n;
            if v == self.place {
                continue;
            }
            match ps.deques[v].steal(allow, policy.steal_half) {
                Take::Empty => self.missed(),
                Take::Declined => {
                    counters.declined();
                    self.missed();
                }
                Take::Got(j, more) => {
                    counters.place_steal(more.len() as u64);
                    self.note(super::trace::Source::PlaceSteal { place: v as u32 });
                    if !more.is_empty() {
                        ps.deques[self.place].push_all(more);
                        if self.registry.threads > 1 {
                            // As `push_place` does for hinted tasks under a guard.
                            if ps.policy.guards_hints() {
                                self.registry.notify_all();
                            } else {
                                self.registry.notify_one();
                            }
                        }
                    }
                    return Some(j);
                }
            }
        }
        None
    }

    /// A deep wait's own task from any place's deque: one this worker pushed at wait depth
    /// `depth` or deeper, so part of what the wait waits for (taking it grows the stack no
    /// more than popping the own deque does).
    pub(super) fn take_own_placed(&self, depth: u32) -> Option<JobRef> {
        if !self.has_places {
            return None;
        }
        let ps = self.registry.places.as_ref()?;
        let n = ps.len();
        let j =
            (0..n).find_map(|k| ps.deques[(self.place + k) % n].take_own(self.index as u32, depth));
        if j.is_some() {
            self.registry.counters[self.index].place_local();
            self.note(super::trace::Source::Own);
        }
        j
    }

    /// One attempt to find work elsewhere: a random victim first, then around; then the
    /// injector.
    pub(crate) fn steal(&self) -> Option<JobRef> {
        let counters = &self.registry.counters[self.index];
        counters.steal_round();
        if let Some(j) = self.steal_places() {
            return Some(j);
        }
        let n = self.registry.threads;
        let start = self.next_victim();
        for k in 0..n {
            let v = (start + k) % n;
            if v == self.index {
                continue;
            }
            match (&self.deque, &self.registry.stealers) {
                (LocalDeque::ChaseLev(_), Stealers::ChaseLev(s)) => loop {
                    match s[v].steal() {
                        Steal::Success(j) => {
                            counters.steal();
                            self.note(super::trace::Source::Steal { victim: v as u32 });
                            return Some(j);
                        }
                        Steal::Empty => {
                            self.missed();
                            break;
                        }
                        Steal::Retry => {}
                    }
                },
                (LocalDeque::Private(p), _) => {
                    // Spawns first: taken without the victim's help.
                    loop {
                        match self.registry.spawn_stealers[v].steal() {
                            Steal::Success(j) => {
                                counters.steal();
                                self.note(super::trace::Source::Steal { victim: v as u32 });
                                return Some(j);
                            }
                            Steal::Empty => break,
                            Steal::Retry => {}
                        }
                    }
                    let mut watch = StallWatch::default();
                    let serve_own = || {
                        p.poll();
                        watch.tick(&self.registry, self.index, v);
                    };
                    // A busy request cell (`Retry`) means another thief is being served
                    // there: try the next victim instead of queueing up.
                    if let Steal::Success(j) = p.req.steal_from(v, serve_own) {
                        counters.steal();
                        self.note(super::trace::Source::Steal { victim: v as u32 });
                        return Some(j);
                    }
                    self.missed();
                }
                (LocalDeque::ChaseLev(_), Stealers::Private(_)) => {
                    unreachable!("a runtime's workers all use its pool")
                }
            }
        }
        self.take_injected()
    }

    /// A job addressed to this worker (a broadcast's share), counted.
    #[inline]
    pub(super) fn take_mail(&self) -> Option<JobRef> {
        let j = self.registry.take_mail(self.index);
        if j.is_some() {
            self.registry.counters[self.index].share();
            self.note(super::trace::Source::Mail);
        }
        j
    }

    /// A job from the injector, counted.
    #[inline]
    pub(super) fn take_injected(&self) -> Option<JobRef> {
        let j = self.registry.take_injected();
        if j.is_some() {
            self.registry.counters[self.index].injected();
            self.note(super::trace::Source::Injected);
        }
        j
    }

    /// The next job for this worker: one addressed to it (a broadcast's share, which other
    /// workers wait for), then its own deque, then stolen or injected work.
    pub(crate) fn find_work(&self) -> Option<JobRef> {
        let j = self
            .take_mail()
            .or_else(|| self.pop_own())
            .or_else(|| self.pop_place())
            .or_else(|| self.steal());
        if self.has_places && j.is_some() {
            self.idle_since.set(None);
        }
        j
    }
}

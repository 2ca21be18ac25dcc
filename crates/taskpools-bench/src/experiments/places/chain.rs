//! The chain of tasks of the policies section: one ready task at a time, each spawning the
//! next at a random place, so that idle workers show what a steal policy costs them.

use std::time::{Duration, Instant};

use taskpools::places::PlaceId;
use taskpools::Runtime;

use super::spawn::mix;

/// `len` tasks, each spinning `work` and then spawning the next at a random place: one task
/// is ready at a time, so every other worker looks for work in vain (where the adaptive
/// policy parks it sooner).
pub(super) fn chain(rt: &Runtime, len: usize, work: Duration) {
    fn link<'s>(s: &taskpools::forkjoin::Scope<'s>, left: usize, places: usize, work: Duration) {
        let t = Instant::now();
        while t.elapsed() < work {
            std::hint::spin_loop();
        }
        if left > 0 {
            let p = mix(left as u64) as usize % places;
            s.spawn_at(PlaceId(p), move |s| link(s, left - 1, places, work))
                .expect("places were checked");
        }
    }
    let places = rt.place_count();
    rt.scope(|s| link(s, len, places, work));
}

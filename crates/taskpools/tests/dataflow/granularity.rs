//! The dependence unit: under the default configuration distinct elements never share one
//! (an array of 16-byte elements is not serialised), under `Config::thesis()` (PARTEE's 2 KiB
//! blocks) neighbouring elements do, and elements 2 KiB apart do not.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use taskpools::dataflow::{self, Config};
use taskpools::Runtime;

use super::meet::Meeting;

/// A 16-byte element, as in an array of fat pointers.
type Pair = [u64; 2];

/// Spawns a write of element `a` and then of element `b`, each of which waits to meet the
/// other, in `dataflow::scope` or, given a configuration, in `dataflow::scope_with`, on a
/// runtime of two threads: whether they ran at the same time.
macro_rules! neighbours_meet {
    ($a:expr, $b:expr $(, $config:expr)?) => {{
        let (a, b): (usize, usize) = ($a, $b);
        let rt = Runtime::new(2).unwrap();
        let mut v: Vec<Pair> = vec![[0; 2]; 256];
        let meeting = Meeting::default();
        let m = &meeting;
        rt.install(|| {
            neighbours_meet!(@scope $($config)?, |df| {
                let r = df.region(&mut v);
                df.spawn(r.at(a).out(), move |_, x| {
                    m.arrive();
                    x[0] = 1;
                });
                df.spawn(r.at(b).out(), move |_, x| {
                    m.arrive();
                    x[0] = 2;
                });
            })
        });
        assert_eq!((v[a][0], v[b][0]), (1, 2));
        meeting.met() == 2
    }};
    (@scope, $f:expr) => {
        dataflow::scope($f)
    };
    (@scope $config:expr, $f:expr) => {
        dataflow::scope_with($config, $f)
    };
}

#[test]
fn the_default_lets_tasks_on_neighbouring_16_byte_elements_run_together() {
    assert_eq!(Config::default(), Config::exact());
    assert!(Config::default().is_exact());
    // `dataflow::scope` (the default) and an explicit `Config::default()`.
    assert!(
        neighbours_meet!(0, 1),
        "dataflow::scope ordered elements 0 and 1"
    );
    assert!(
        neighbours_meet!(5, 6, Config::default()),
        "Config::default() ordered elements 5 and 6"
    );
}
#[test]
fn the_thesis_config_orders_neighbouring_elements_but_not_distant_blocks() {
    assert_eq!(Config::thesis(), Config::blocks(2048).unwrap());
    assert!(!Config::thesis().is_exact());
    // Elements 0 and 1 share the first 2 KiB block: the second task starts only after the
    // first has completed, however long the first takes.
    let rt = Runtime::new(2).unwrap();
    for _ in 0..5 {
        let mut v: Vec<Pair> = vec![[0; 2]; 256];
        let first_done = AtomicBool::new(false);
        let (done, d) = (&first_done, &first_done);
        rt.install(|| {
            dataflow::scope_with(Config::thesis(), |df| {
                let r = df.region(&mut v);
                df.spawn(r.at(0).out(), move |_, x| {
                    std::thread::sleep(Duration::from_millis(20));
                    x[0] = 1;
                    done.store(true, Ordering::SeqCst);
                });
                df.spawn(r.at(1).out(), move |_, x| {
                    assert!(
                        d.load(Ordering::SeqCst),
                        "ran beside its block's other writer"
                    );
                    x[0] = 2;
                });
            })
        });
        assert_eq!((v[0][0], v[1][0]), (1, 2));
    }
    // Element 128 starts the second block (bytes 2048..): it does not wait for element 0.
    assert!(
        neighbours_meet!(128, 0, Config::thesis()),
        "Config::thesis() ordered elements in different 2 KiB blocks"
    );
}

//! Prints the cost of one unit of simulated work (`taskpools::synthetic::work`) on this machine.
use std::time::Instant;
fn main() {
    for units in [100u64, 1000, 100_000, 10_000_000] {
        let t = Instant::now();
        let r = taskpools::synthetic::work(units);
        let e = t.elapsed();
        println!(
            "units {units}: {:?} = {:.3} ns/unit ({r})",
            e,
            e.as_nanos() as f64 / units as f64
        );
    }
}

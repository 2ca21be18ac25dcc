//! One module per experiment.

pub mod blocked;
pub mod dataflow;
pub mod deque;
pub mod distributed;
pub mod drivers;
pub mod forkjoin;
pub mod idle;
pub mod iter;
pub mod manber;
pub mod pinning;
pub mod places;
pub mod queens;
pub mod radiosity;
pub mod report;
pub mod suite;
pub mod synthetic;
pub mod trace_cost;

/// The median of a non-empty sample of counts (the upper one of an even sample).
pub fn median_u64(xs: &[u64]) -> u64 {
    let mut v = xs.to_vec();
    v.sort_unstable();
    v[v.len() / 2]
}

/// Median, minimum and maximum of a non-empty sample.
pub fn summarize(xs: &[f64]) -> (f64, f64, f64) {
    assert!(!xs.is_empty(), "no samples");
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    (median, v[0], v[n - 1])
}

#[cfg(test)]
mod tests {
    #[test]
    fn summarize_median() {
        assert_eq!(super::summarize(&[3.0, 1.0, 2.0]), (2.0, 1.0, 3.0));
        assert_eq!(super::summarize(&[4.0, 1.0, 2.0, 3.0]), (2.5, 1.0, 4.0));
    }
}

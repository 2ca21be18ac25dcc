//! What the front ends share about panics: the message of a payload, for reports that cross a
//! process or thread boundary as text (a distributed phase's `RankPanicked`, a worker's
//! recorded panic).

/// The message of a panic payload: its text when it is a `&str` or a `String`, else a line
/// saying that it is not a string.
// Only the distributed phase reports panics as text today.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a payload that is not a string".to_string()
    }
}

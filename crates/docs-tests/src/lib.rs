//! The examples of the repository's README and of its `docs/` pages, compiled and run as
//! doctests (`cargo test -p taskpools-docs-tests`, part of the test command). A crate of its
//! own, so that the library's package, which holds neither, builds its doctests alone.
#![allow(missing_docs)]

/// The README's examples are compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

/// The examples of the repository's `docs/` pages (moved there from the README), compiled and
/// run as doctests too.
#[cfg(doctest)]
pub mod docs_doctests {
    #[doc = include_str!("../../../docs/phase.md")]
    pub struct Phase;
    #[doc = include_str!("../../../docs/runtime.md")]
    pub struct Runtime;
    #[doc = include_str!("../../../docs/forkjoin.md")]
    pub struct Forkjoin;
    #[doc = include_str!("../../../docs/dataflow.md")]
    pub struct Dataflow;
    #[doc = include_str!("../../../docs/places.md")]
    pub struct Places;
    #[doc = include_str!("../../../docs/traces.md")]
    pub struct Traces;
}

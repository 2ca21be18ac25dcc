//! Data-flow scopes from the outside: random programs against their oracle, the sequential
//! elision (`oracle`), targeted tests of the rest of the contract (`behaviour`), read-only
//! regions and one-element accesses (`accesses`), and the dependence unit under the default
//! and the thesis' configuration (`granularity`).

mod accesses;
mod behaviour;
mod edges;
mod granularity;
mod kinds;
mod meet;
mod oracle;
mod wait;

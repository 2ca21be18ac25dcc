//! Data-flow scopes from the outside: random programs against their oracle, the sequential
//! elision (`oracle`), and targeted tests of the rest of the contract (`behaviour`).

mod behaviour;
mod kinds;
mod oracle;

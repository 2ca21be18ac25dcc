//! The fork-join kernels' peers that are programs of their own: oneTBB (`task_group`,
//! `parallel_invoke`) and LLVM's OpenMP runtime (tasks), run as
//! [`crate::experiments::drivers::program`] describes.

pub use crate::experiments::drivers::program::{fnv, ProcPeer};

/// The process peers, in their rows' order.
pub const PROC_PEERS: [ProcPeer; 3] = [
    ProcPeer {
        name: "tbb",
        runtime: "tbb task_group",
        variant: "task_group",
        exe: env!("TASKPOOLS_PEER_TBB"),
        install: "apt-get install libtbb-dev",
        identity: "oneTBB",
    },
    ProcPeer {
        name: "tbb",
        runtime: "tbb parallel_invoke",
        variant: "parallel_invoke",
        exe: env!("TASKPOOLS_PEER_TBB"),
        install: "apt-get install libtbb-dev",
        identity: "oneTBB",
    },
    ProcPeer {
        name: "libomp",
        runtime: "libomp tasks",
        variant: "tasks",
        exe: env!("TASKPOOLS_PEER_LIBOMP"),
        install: "apt-get install libomp-dev clang",
        identity: "libomp",
    },
];

/// Whether the peer called `name` (in `--peers`) was built.
pub fn built(name: &str) -> bool {
    PROC_PEERS.iter().any(|p| p.name == name && p.built())
}

/// The install hint of the process peer called `name`, if it is one.
pub fn install_hint(name: &str) -> Option<&'static str> {
    PROC_PEERS
        .iter()
        .find(|p| p.name == name)
        .map(|p| p.install)
}

//! Unit tests of the suite: at small sizes every variant of every benchmark matches the
//! sequential run, the sequential programs compute what they claim, and bad sizes are refused
//! with the option named.

use super::*;

/// Small sizes that still have several tiles, bands, levels and blocks.
const SMALL: Sizes = Sizes {
    options: 1000,
    options_block: 64,
    // Seven tiles: the two-level variants' last outer tile is one tile wide.
    cholesky_n: 112,
    cholesky_tile: 16,
    heat_n: 64,
    heat_steps: 7,
    heat_band: 5,
    heat_tile: 24,
    lu_n: 96,
    lu_tile: 16,
    matmul_n: 64,
    matmul_leaf: 8,
    sort_n: 5000,
    sort_leaf: 64,
};

#[test]
fn every_variant_of_every_benchmark_matches_the_sequential_run() {
    let p = Params {
        threads: vec![1, 2],
        reps: 2,
        benches: Bench::ALL.to_vec(),
        sizes: SMALL,
        dataflow: Config::thesis(),
        pin: false,
        trace: None,
        peers: PEERS.to_vec(),
    };
    let r = run(&p, &Progress::new(false)).unwrap();
    for b in Bench::ALL {
        let rows: Vec<_> = r.iter().filter(|r| r.bench == b.name()).collect();
        assert!(rows.iter().any(|r| r.variant == "dataflow"), "{}", b.name());
        assert!(rows.iter().all(|r| r.ms.is_some()), "{}", b.name());
        // The peers run in child processes of the workbench's executable, which a unit test
        // does not have: their rows are in the CLI tests (tests/cli_drivers.rs).
        assert!(!rows.iter().any(|r| is_openmp(&r.variant)), "{}", b.name());
    }
}

#[test]
fn the_sequential_programs_compute_what_they_claim() {
    // Mergesort sorts; Cholesky's L Lᵀ and LU's L U give back the matrix.
    let c0 = Ctx {
        threads: 1,
        rt: &taskpools::Runtime::builder().threads(1).build().unwrap(),
        pool: &rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap(),
        dataflow: Config::thesis(),
    };
    let mut m = mergesort::Mergesort::new(3000, 50);
    m.reset();
    m.run("sequential", &c0);
    m.keep_as_expected();
    assert!(m.sorted());
    for kind in [tiled::Factor::Cholesky, tiled::Factor::Lu] {
        let mut t = tiled::Tiled::new(kind, 48, 16);
        t.reset();
        t.run("sequential", &c0);
        assert!(t.residual() < 1e-9, "{kind:?}: {}", t.residual());
    }
}

#[test]
fn bad_sizes_are_refused_with_the_option_named() {
    let mut s = SMALL;
    s.cholesky_tile = 17;
    assert!(s
        .check()
        .unwrap_err()
        .to_string()
        .contains("--cholesky-tile"));
    let mut s = SMALL;
    s.matmul_leaf = 24;
    assert!(s.check().unwrap_err().to_string().contains("--matmul-n"));
    let mut s = SMALL;
    s.heat_band = 0;
    assert!(s.check().unwrap_err().to_string().contains("--heat-band"));
    for s in [Sizes::DEFAULT, Sizes::TOUR, Sizes::PAPER] {
        s.check().unwrap();
    }
}

//! Builds the OpenMP peers (`csrc/`) with the system C compiler and `-fopenmp`. Where that
//! fails (no C compiler, or one without OpenMP), the build goes on without them and the
//! experiments print "not available" in their rows.
//!
//! Then the peer programs of `taskpools forkjoin` (`peers/`), one executable per runtime, each
//! run in a process of its own: oneTBB (`forkjoin_tbb`, where `libtbb-dev` is installed) and
//! LLVM's OpenMP runtime (`forkjoin_omp`, built with `clang++ -fopenmp` against libomp, where
//! `clang` and `libomp-dev` are). Each found one is compiled into `OUT_DIR` and its path
//! exported as `TASKPOOLS_PEER_TBB` / `TASKPOOLS_PEER_LIBOMP` (empty when it was not built);
//! a missing one fails nothing: the workbench has no rows for it and says how to install it.
//! `taskpools iter`'s peers (`iter_tbb`, `iter_omp`) are built the same way, exported as
//! `TASKPOOLS_ITER_PEER_TBB` / `TASKPOOLS_ITER_PEER_LIBOMP`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=csrc/dataflow_omp.c");
    println!("cargo:rerun-if-changed=csrc/suite_omp.c");
    println!("cargo:rerun-if-changed=csrc/omp_pin.h");
    println!("cargo:rustc-check-cfg=cfg(taskpools_openmp)");
    let mut b = cc::Build::new();
    b.file("csrc/dataflow_omp.c")
        .file("csrc/suite_omp.c")
        .opt_level(2)
        .cargo_warnings(false);
    let runtime = if b.get_compiler().is_like_clang() {
        "omp"
    } else {
        "gomp"
    };
    let built = b.is_flag_supported("-fopenmp").unwrap_or(false)
        && b.flag("-fopenmp").try_compile("taskpools_omp").is_ok();
    if built {
        println!("cargo:rustc-link-lib={runtime}");
        println!("cargo:rustc-cfg=taskpools_openmp");
    } else {
        println!(
            "cargo:warning=OpenMP peers not built (no C compiler with -fopenmp): their rows say \"not available\""
        );
    }
    peers();
    iter_peers();
}

/// Builds the peer programs of `taskpools forkjoin` and exports their paths.
fn peers() {
    for f in [
        "peer_util.hpp",
        "tbb_arena.hpp",
        "omp_team.hpp",
        "forkjoin_common.hpp",
        "forkjoin_tbb.cpp",
        "forkjoin_omp.cpp",
    ] {
        println!("cargo:rerun-if-changed=peers/{f}");
    }
    println!("cargo:rerun-if-env-changed=PATH");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let tbb = build_tbb(&out);
    let libomp = build_libomp(&out);
    for (var, exe) in [
        ("TASKPOOLS_PEER_TBB", tbb),
        ("TASKPOOLS_PEER_LIBOMP", libomp),
    ] {
        let path = exe.map(|p| p.display().to_string()).unwrap_or_default();
        println!("cargo:rustc-env={var}={path}");
    }
}

/// Runs `cmd`; whether it succeeded (its output is not shown: a failure only means that the
/// peer is not installed).
fn ok(mut cmd: Command) -> bool {
    cmd.output().is_ok_and(|o| o.status.success())
}

/// oneTBB: clang++, else the C++ compiler `cc` picks, with pkg-config's flags for `tbb` where it knows them
/// and `-ltbb` otherwise.
fn build_tbb(out: &Path) -> Option<PathBuf> {
    build_tbb_peer(out, "peers/forkjoin_tbb.cpp", "forkjoin_tbb", &[])
}

/// Compiles the oneTBB program `src` into `out/name` (with the extra compiler flags `extra`).
fn build_tbb_peer(out: &Path, src: &str, name: &str, extra: &[&str]) -> Option<PathBuf> {
    let exe = out.join(name);
    let flags: Vec<String> = Command::new("pkg-config")
        .args(["--cflags", "--libs", "tbb"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .map(String::from)
                .collect()
        })
        .unwrap_or_else(|| vec!["-ltbb".to_string()]);
    // clang++ first: its code for the kernels' leaves is LLVM's, as the Rust kernels' is (with
    // g++ -O2 the multiply ran at 0.05 s where clang++'s build takes 0.032 s, 512x512, 1
    // thread). Else the C++ compiler `cc` picks.
    let mut compilers: Vec<Command> = vec![Command::new("clang++")];
    if let Ok(c) = cc::Build::new()
        .cpp(true)
        .cargo_warnings(false)
        .cargo_metadata(false)
        .try_get_compiler()
    {
        compilers.push(c.to_command());
    }
    for mut cmd in compilers {
        cmd.args(["-O2", "-std=c++17", "-pthread"])
            .args(extra)
            .args([src, "-o"])
            .arg(&exe)
            .args(&flags)
            .arg("-ldl");
        if ok(cmd) {
            return Some(exe);
        }
    }
    None
}

/// LLVM's OpenMP runtime: `clang++ -fopenmp=libomp`, linked with `-lomp` from the first
/// directory that has it (the default search path, then LLVM's versioned directories), with
/// that directory as the run path.
fn build_libomp(out: &Path) -> Option<PathBuf> {
    build_libomp_peer(out, "peers/forkjoin_omp.cpp", "forkjoin_omp", &[])
}

/// Compiles the OpenMP program `src` against libomp into `out/name` (with the extra compiler
/// flags `extra`).
fn build_libomp_peer(out: &Path, src: &str, name: &str, extra: &[&str]) -> Option<PathBuf> {
    let exe = out.join(name);
    let mut dirs: Vec<Option<PathBuf>> = vec![None];
    for v in (11..=20).rev() {
        let d = PathBuf::from(format!("/usr/lib/llvm-{v}/lib"));
        if d.join("libomp.so").exists() {
            dirs.push(Some(d));
        }
    }
    for clang in [
        "clang++",
        "clang++-14",
        "clang++-15",
        "clang++-16",
        "clang++-17",
        "clang++-18",
    ] {
        for d in &dirs {
            let mut cmd = Command::new(clang);
            cmd.args(["-O2", "-std=c++17", "-fopenmp=libomp"])
                .args(extra)
                .args([src, "-o"])
                .arg(&exe);
            if let Some(d) = d {
                cmd.arg(format!("-L{}", d.display()))
                    .arg(format!("-Wl,-rpath,{}", d.display()));
            }
            cmd.args(["-lomp", "-ldl"]);
            if ok(cmd) {
                return Some(exe);
            }
        }
    }
    None
}

/// The peer programs of `taskpools iter` (`peers/iter_tbb.cpp`, `peers/iter_omp.cpp`), built
/// as the fork-join ones are, where the same runtimes are installed; their paths exported as
/// `TASKPOOLS_ITER_PEER_TBB` / `TASKPOOLS_ITER_PEER_LIBOMP` (empty when not built). Without
/// floating-point contraction, so that Mandelbrot's and n-body's arithmetic is the Rust
/// kernels' to the bit.
fn iter_peers() {
    for f in ["iter_common.hpp", "iter_tbb.cpp", "iter_omp.cpp"] {
        println!("cargo:rerun-if-changed=peers/{f}");
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let exact = ["-ffp-contract=off"];
    let tbb = build_tbb_peer(&out, "peers/iter_tbb.cpp", "iter_tbb", &exact);
    let libomp = build_libomp_peer(&out, "peers/iter_omp.cpp", "iter_omp", &exact);
    for (var, exe) in [
        ("TASKPOOLS_ITER_PEER_TBB", tbb),
        ("TASKPOOLS_ITER_PEER_LIBOMP", libomp),
    ] {
        let path = exe.map(|p| p.display().to_string()).unwrap_or_default();
        println!("cargo:rustc-env={var}={path}");
    }
}

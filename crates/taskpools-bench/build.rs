//! Builds the peer runtimes' programs, each run by the workbench in a process of its own
//! (libgomp and libomp define the same `omp_*`/`GOMP_*` entry points, and code built for one
//! binds to whichever loaded first; a process that exits also takes the runtime's spinning
//! threads with it). Each is built only where its runtime is installed; a missing one fails
//! nothing: the workbench has no rows for it and says how to install it.
//!
//! - `peers/forkjoin_*.cpp`: the fork-join kernels as programs of their own, for oneTBB
//!   (`forkjoin_tbb`, where `libtbb-dev` is installed) and LLVM's OpenMP runtime
//!   (`forkjoin_omp`, `clang++ -fopenmp` against libomp, where `clang` and `libomp-dev` are),
//!   paths exported as `TASKPOOLS_PEER_TBB` / `TASKPOOLS_PEER_LIBOMP`; `taskpools queens`'s
//!   oneTBB program (`peers/queens_tbb.cpp`, `TASKPOOLS_PEER_QUEENS_TBB`); `taskpools iter`'s
//!   (`peers/iter_tbb.cpp`, `peers/iter_omp.cpp`) the same way, exported as
//!   `TASKPOOLS_ITER_PEER_TBB` / `TASKPOOLS_ITER_PEER_LIBOMP`.
//! - The drivers of `taskpools suite` and `taskpools dataflow` (`peers/suite_omp.c`,
//!   `peers/dataflow_omp.c`): shared objects that the workbench loads into a child process of
//!   itself, which hands them its own Rust kernels and inputs, so that every result can be
//!   compared bit for bit. The same OpenMP source is built twice: with GCC against libgomp
//!   (`TASKPOOLS_DRIVER_LIBGOMP`) and with clang against libomp (`TASKPOOLS_DRIVER_LIBOMP`);
//!   `peers/starpu.c` against StarPU 1.3 where `libstarpu-dev` is installed
//!   (`TASKPOOLS_DRIVER_STARPU`).
//!
//! Every exported path is empty where its program was not built. The compilers are called
//! bare (the path `cc` finds, none of its flags): under `-Zsanitizer=address` `cc` would add
//! `-fsanitize=address`, and a driver linked against GCC's libasan cannot load into a Rust
//! process that carries its own ASan runtime; uninstrumented, the drivers load, and ASan
//! checks the Rust side of every call.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    peers();
    iter_peers();
    drivers();
}

/// Builds the peer programs of `taskpools forkjoin` and `taskpools queens` and exports their
/// paths.
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
    println!("cargo:rerun-if-changed=peers/queens_tbb.cpp");
    let tbb = build_tbb(&out);
    let libomp = build_libomp(&out);
    let queens = build_tbb_peer(&out, "peers/queens_tbb.cpp", "queens_tbb", &[]);
    for (var, exe) in [
        ("TASKPOOLS_PEER_TBB", tbb),
        ("TASKPOOLS_PEER_LIBOMP", libomp),
        ("TASKPOOLS_PEER_QUEENS_TBB", queens),
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
        compilers.push(Command::new(c.path()));
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

/// LLVM's OpenMP runtime: the fork-join peer, `clang++ -fopenmp=libomp`.
fn build_libomp(out: &Path) -> Option<PathBuf> {
    build_libomp_peer(out, "peers/forkjoin_omp.cpp", "forkjoin_omp", &[])
}

/// Compiles the OpenMP program `src` against libomp into `out/name` (with the extra compiler
/// flags `extra`).
fn build_libomp_peer(out: &Path, src: &str, name: &str, extra: &[&str]) -> Option<PathBuf> {
    let exe = out.join(name);
    let compilers = [
        "clang++",
        "clang++-14",
        "clang++-15",
        "clang++-16",
        "clang++-17",
        "clang++-18",
    ];
    let args: Vec<&str> = ["-std=c++17"]
        .iter()
        .chain(extra)
        .chain(&[src])
        .copied()
        .collect();
    with_libomp(&compilers, &args, &exe).then_some(exe)
}

/// Compiles `args` with the first of `compilers` that works, `-O2 -fopenmp=libomp`, linked
/// with `-lomp` from the first directory that has it (the default search path, then LLVM's
/// versioned directories), with that directory as the run path, into `out`.
fn with_libomp(compilers: &[&str], args: &[&str], out: &Path) -> bool {
    let mut dirs: Vec<Option<PathBuf>> = vec![None];
    for v in (11..=20).rev() {
        let d = PathBuf::from(format!("/usr/lib/llvm-{v}/lib"));
        if d.join("libomp.so").exists() {
            dirs.push(Some(d));
        }
    }
    for compiler in compilers {
        for d in &dirs {
            let mut cmd = Command::new(compiler);
            cmd.args(["-O2", "-fopenmp=libomp"])
                .args(args)
                .arg("-o")
                .arg(out);
            if let Some(d) = d {
                cmd.arg(format!("-L{}", d.display()))
                    .arg(format!("-Wl,-rpath,{}", d.display()));
            }
            cmd.args(["-lomp", "-ldl"]);
            if ok(cmd) {
                return true;
            }
        }
    }
    false
}

/// The OpenMP drivers of `suite` and `dataflow`, one shared object per OpenMP runtime, and
/// their paths exported.
fn drivers() {
    const SOURCES: [&str; 3] = [
        "peers/suite_omp.c",
        "peers/dataflow_omp.c",
        "peers/omp_identity.c",
    ];
    for f in SOURCES.iter().chain(&["peers/omp_pin.h"]) {
        println!("cargo:rerun-if-changed={f}");
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let shared = ["-shared", "-fPIC"];
    let args: Vec<&str> = shared.iter().chain(&SOURCES).copied().collect();
    // libgomp: GCC's OpenMP runtime, with GCC (`cc`'s compiler where it is GCC).
    let gomp = out.join("libtaskpools_libgomp.so");
    let mut compilers: Vec<Command> = Vec::new();
    if let Ok(c) = cc::Build::new()
        .cargo_warnings(false)
        .cargo_metadata(false)
        .try_get_compiler()
    {
        if c.is_like_gnu() {
            compilers.push(Command::new(c.path()));
        }
    }
    compilers.push(Command::new("gcc"));
    let gomp_built = compilers.into_iter().any(|mut cmd| {
        cmd.args(["-O2", "-fopenmp"])
            .args(&args)
            .arg("-o")
            .arg(&gomp);
        ok(cmd)
    });
    // libomp: LLVM's, with clang.
    let omp = out.join("libtaskpools_libomp.so");
    let omp_built = with_libomp(
        &[
            "clang", "clang-14", "clang-15", "clang-16", "clang-17", "clang-18",
        ],
        &args,
        &omp,
    );
    // StarPU, with the system C compiler and pkg-config's flags for starpu-1.3.
    println!("cargo:rerun-if-changed=peers/starpu.c");
    let starpu = out.join("libtaskpools_starpu.so");
    let starpu_built = Command::new("pkg-config")
        .args(["--cflags", "--libs", "starpu-1.3"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .is_some_and(|o| {
            let flags = String::from_utf8_lossy(&o.stdout).to_string();
            let mut cmd = match cc::Build::new()
                .cargo_warnings(false)
                .cargo_metadata(false)
                .try_get_compiler()
            {
                Ok(c) => Command::new(c.path()),
                Err(_) => Command::new("cc"),
            };
            cmd.args(["-O2", "-shared", "-fPIC", "peers/starpu.c", "-o"])
                .arg(&starpu)
                .args(flags.split_whitespace())
                .arg("-ldl");
            ok(cmd)
        });
    for (var, path, built) in [
        ("TASKPOOLS_DRIVER_LIBGOMP", gomp, gomp_built),
        ("TASKPOOLS_DRIVER_LIBOMP", omp, omp_built),
        ("TASKPOOLS_DRIVER_STARPU", starpu, starpu_built),
    ] {
        let path = if built {
            path.display().to_string()
        } else {
            String::new()
        };
        println!("cargo:rustc-env={var}={path}");
    }
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

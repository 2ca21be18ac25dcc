//! Builds the OpenMP peers (`csrc/`) with the system C compiler and `-fopenmp`. Where that
//! fails (no C compiler, or one without OpenMP), the build goes on without them and the
//! experiments print "not available" in their rows.

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
}

//! The peer runtimes that run in processes of their own, in two shapes:
//!
//! - **Programs** ([`program`]): C++ executables that regenerate their input and run whole
//!   kernels (oneTBB and libomp for `forkjoin`, oneTBB for `queens`).
//! - **Drivers** (this module and [`process`]): shared objects whose C creates the tasks with
//!   its runtime's constructs (OpenMP `task` with `depend`, StarPU's `starpu_task_insert`)
//!   and calls our Rust kernels through function pointers, so that a row compares runtimes,
//!   not compilers, and every result can be compared bit for bit with the sequential
//!   program's (`suite`, `dataflow`).
//!
//! A driver never runs in the workbench's own process: [`process`] starts a child of the
//! workbench (`taskpools peer-run`), which loads exactly one driver, builds the input as the
//! parent does, runs the work once untimed and once timed, and prints the runtime that ran,
//! the time and a hash of the result. libgomp and libomp define the same `omp_*`/`GOMP_*`
//! entry points, so two drivers in one process would bind to whichever loaded first; and a
//! process that exits takes the runtime's spinning threads with it, so the next row starts on
//! quiet cores.

pub mod child;
pub mod process;
pub mod program;

use std::ffi::{c_char, c_void, CStr, CString};

use anyhow::{bail, Context, Result};

/// A runtime with a driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeerRuntime {
    /// GCC's OpenMP runtime.
    Libgomp,
    /// LLVM's OpenMP runtime.
    Libomp,
    /// StarPU (tasks on registered data; dependences from the access modes).
    Starpu,
}

impl PeerRuntime {
    /// Every one, in the rows' order.
    pub const ALL: [PeerRuntime; 3] = [
        PeerRuntime::Libgomp,
        PeerRuntime::Libomp,
        PeerRuntime::Starpu,
    ];

    /// Its name: the first word of its rows' variant, and its name in `--peers`.
    pub fn name(self) -> &'static str {
        match self {
            PeerRuntime::Libgomp => "libgomp",
            PeerRuntime::Libomp => "libomp",
            PeerRuntime::Starpu => "starpu",
        }
    }

    /// Whether its driver runs programs of `construct`: `depend` (tasks with dependences on
    /// data) or `tasks` (independent tasks and nested ones with waits). StarPU's are only
    /// the former: its tasks are submitted by one thread on registered data, and a recursive
    /// program would be a different one.
    pub fn covers(self, construct: &str) -> bool {
        match self {
            PeerRuntime::Libgomp | PeerRuntime::Libomp => true,
            PeerRuntime::Starpu => construct == "depend",
        }
    }

    /// Parses a name.
    pub fn from_name(s: &str) -> Option<PeerRuntime> {
        PeerRuntime::ALL.into_iter().find(|r| r.name() == s)
    }

    /// The driver's path, set by the build script; empty where it was not built.
    fn path(self) -> &'static str {
        match self {
            PeerRuntime::Libgomp => env!("TASKPOOLS_DRIVER_LIBGOMP"),
            PeerRuntime::Libomp => env!("TASKPOOLS_DRIVER_LIBOMP"),
            PeerRuntime::Starpu => env!("TASKPOOLS_DRIVER_STARPU"),
        }
    }

    /// Whether the build script built its driver.
    pub fn built(self) -> bool {
        !self.path().is_empty()
    }

    /// What to install (then rebuild) to have it.
    pub fn install(self) -> &'static str {
        match self {
            PeerRuntime::Libgomp => "apt-get install gcc (GCC with -fopenmp), then `cargo clean -p taskpools-bench` and rebuild",
            PeerRuntime::Libomp => "apt-get install libomp-dev clang, then `cargo clean -p taskpools-bench` and rebuild",
            PeerRuntime::Starpu => "apt-get install libstarpu-dev pkg-config, then `cargo clean -p taskpools-bench` and rebuild",
        }
    }

    /// The file name of the shared object that must define the runtime's entry points.
    fn identity(self) -> &'static str {
        match self {
            PeerRuntime::Libgomp => "libgomp",
            PeerRuntime::Libomp => "libomp",
            PeerRuntime::Starpu => "libstarpu",
        }
    }

    /// Whether `identity` (what a driver reported) names this runtime: the base name of the
    /// shared object starts with the runtime's name.
    pub fn is(self, identity: &str) -> bool {
        let base = identity.rsplit('/').next().unwrap_or(identity);
        base.starts_with(self.identity())
    }
}

/// Refuses a driver runtime named in `--peers` that this build lacks, with how to install it
/// (`all` takes those that were built).
pub fn refuse_unbuilt(named: &[String]) -> Result<()> {
    for n in named {
        if let Some(r) = PeerRuntime::from_name(n).filter(|r| !r.built()) {
            bail!(
                "--peers {n}: not installed when this workbench was built ({})",
                r.install()
            );
        }
    }
    Ok(())
}

/// A line per driver runtime that this build lacks, with how to install it (for the tables).
pub fn not_built_notes() -> String {
    PeerRuntime::ALL
        .iter()
        .filter(|r| !r.built())
        .map(|r| format!("\n{}: not built here ({})\n", r.name(), r.install()))
        .collect()
}

/// A loaded driver. It stays loaded until the process ends (runtimes such as libgomp do not
/// support being unloaded while their threads exist), so a process loads at most one.
pub struct Driver {
    handle: *mut c_void,
    runtime: PeerRuntime,
}

impl Driver {
    /// Loads `runtime`'s driver, and checks that its OpenMP entry points are the runtime's.
    pub fn open(runtime: PeerRuntime) -> Result<Driver> {
        if !runtime.built() {
            bail!("{}: not built ({})", runtime.name(), runtime.install());
        }
        let path = CString::new(runtime.path()).context("a driver path without NUL bytes")?;
        // SAFETY: a NUL-terminated path; the library's initialisers (the C runtime's, the
        // OpenMP runtime's, StarPU's and hwloc's) run no Rust code.
        let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            // SAFETY: dlerror returns NULL or a NUL-terminated message owned by libc.
            let why = unsafe {
                let e = libc::dlerror();
                if e.is_null() {
                    "unknown error".to_string()
                } else {
                    CStr::from_ptr(e).to_string_lossy().into_owned()
                }
            };
            bail!(
                "{}: could not load {}: {why}",
                runtime.name(),
                runtime.path()
            );
        }
        Ok(Driver { handle, runtime })
    }

    /// The address of the symbol `name`.
    fn address(&self, name: &str) -> Result<*mut c_void> {
        let c = CString::new(name).context("a symbol name without NUL bytes")?;
        // SAFETY: `handle` is a live handle from dlopen; `c` is NUL-terminated.
        let p = unsafe { libc::dlsym(self.handle, c.as_ptr()) };
        if p.is_null() {
            bail!(
                "{}: the driver {} has no symbol `{name}`",
                self.runtime.name(),
                self.runtime.path()
            );
        }
        Ok(p)
    }

    /// The function `name`, as the function-pointer type `F`.
    ///
    /// # Safety
    /// `F` is an `extern "C"` function-pointer type whose signature is the C definition's.
    pub unsafe fn function<F: Copy>(&self, name: &str) -> Result<F> {
        assert_eq!(
            std::mem::size_of::<F>(),
            std::mem::size_of::<*mut c_void>(),
            "F is a function pointer"
        );
        let p = self.address(name)?;
        // SAFETY: `p` is the address of the function `name`, whose signature is `F`'s per
        // the caller's contract; function and data pointers have one size here (asserted).
        Ok(unsafe { std::mem::transmute_copy::<*mut c_void, F>(&p) })
    }

    /// The path of the shared object that the driver's runtime calls reach (its
    /// `taskpools_driver_runtime`), checked against the runtime it was built for.
    pub fn identity(&self) -> Result<String> {
        // SAFETY: every driver defines `const char *taskpools_driver_runtime(void)`
        // (omp_identity.c, starpu.c).
        let f: unsafe extern "C" fn() -> *const c_char =
            unsafe { self.function("taskpools_driver_runtime")? };
        // SAFETY: it returns a NUL-terminated string owned by the dynamic linker (or a
        // literal), valid while the library is loaded.
        let s = unsafe { CStr::from_ptr(f()) }
            .to_string_lossy()
            .into_owned();
        if !self.runtime.is(&s) {
            bail!(
                "the {} driver's runtime calls reach `{s}`, not {}",
                self.runtime.name(),
                self.runtime.name()
            );
        }
        Ok(s)
    }
}

//! Pinning threads to cores: our runtime's and rayon's workers through their start hooks, the
//! peers without one (chili, forte) from outside, by thread id.

/// The cores this process may run on, listed once, at the first call (`main` makes it
/// before any experiment runs): the experiments pin the calling thread to core 0 for their
/// sequential runs, and a list taken from that thread's mask afterwards would hold core 0
/// only, pinning every worker of every later experiment there.
pub fn cores() -> Option<&'static [core_affinity::CoreId]> {
    static CORES: std::sync::OnceLock<Option<Vec<core_affinity::CoreId>>> =
        std::sync::OnceLock::new();
    CORES
        .get_or_init(|| core_affinity::get_core_ids().filter(|c| !c.is_empty()))
        .as_deref()
}

/// A function that pins the calling thread to core `i mod cores` (or does nothing).
pub fn pinner(pin: bool) -> impl Fn(usize) + Clone + Send + Sync + 'static {
    let cores = cores().filter(|_| pin);
    move |i| {
        if let Some(c) = cores {
            core_affinity::set_for_current(c[i % c.len()]);
        }
    }
}

/// The threads of this process (Linux: `/proc/self/task`), with their names; empty elsewhere.
fn threads_now() -> Vec<(i32, String)> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    let mut v: Vec<(i32, String)> = dir
        .filter_map(|e| {
            let e = e.ok()?;
            let tid: i32 = e.file_name().to_str()?.parse().ok()?;
            let name = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
            Some((tid, name.trim().to_string()))
        })
        .collect();
    v.sort();
    v
}

/// Pins thread `tid` of this process to core `i mod cores` (Linux; elsewhere nothing).
fn pin_tid(tid: i32, i: usize) {
    #[cfg(target_os = "linux")]
    if let Some(cores) = cores() {
        let core = cores[i % cores.len()].id;
        // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET writes inside it (core <
        // CPU_SETSIZE, since the core came from this process's own affinity mask), and
        // sched_setaffinity only reads it.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(core, &mut set);
            if libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                eprintln!(
                    "taskpools: could not pin thread {tid} to core {core}: {}",
                    std::io::Error::last_os_error()
                );
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (tid, i);
}

/// Lets the calling thread run on every core of [`cores`] again (Linux; elsewhere nothing).
/// The data-flow and suite experiments pin the calling thread to core 0 for their sequential
/// runs, and threads spawned afterwards inherit that mask: in a tour, Manber's 16 and 2
/// participants all ran on core 0. The tour calls this after every step that pins threads.
pub fn unpin_current() {
    #[cfg(target_os = "linux")]
    if let Some(cores) = cores() {
        // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET writes inside it (every
        // core < CPU_SETSIZE, since they came from this process's own affinity mask), and
        // sched_setaffinity only reads it.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for c in cores {
                libc::CPU_SET(c.id, &mut set);
            }
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                eprintln!(
                    "taskpools: could not unpin this thread: {}",
                    std::io::Error::last_os_error()
                );
            }
        }
    }
}

/// A peer runtime whose threads cannot be given a start hook (chili, forte) is pinned from
/// outside: `make` builds it, and the threads that appeared meanwhile are its own. Those for
/// which `is_worker` holds (given their position among the new threads and their name) are
/// pinned to cores 1, 2, …, like worker 1, 2, … of ours and rayon's; the kernel's caller, which
/// joins these runtimes as their first participant, runs on core 0 (see `on_core_0`). Their
/// heartbeat threads stay unpinned.
pub fn with_new_threads_pinned<T>(
    pin: bool,
    make: impl FnOnce() -> T,
    is_worker: impl Fn(usize, &str) -> bool,
) -> T {
    pinned_new_threads(pin, make, is_worker).0
}

/// [`with_new_threads_pinned`], also returning the new threads (id, name).
fn pinned_new_threads<T>(
    pin: bool,
    make: impl FnOnce() -> T,
    is_worker: impl Fn(usize, &str) -> bool,
) -> (T, Vec<(i32, String)>) {
    let before = threads_now();
    let made = make();
    let new: Vec<_> = threads_now()
        .into_iter()
        .filter(|t| !before.iter().any(|b| b.0 == t.0))
        .collect();
    if pin {
        let mut core = 1;
        for (k, (tid, name)) in new.iter().enumerate() {
            if is_worker(k, name) {
                pin_tid(*tid, core);
                core += 1;
            }
        }
    }
    (made, new)
}

/// A chili pool for `t` threads: the caller plus `t − 1` workers, which chili starts before its
/// heartbeat thread; with `pin`, worker `k` runs on core `k` (the caller belongs on core 0).
pub fn chili_pool(t: usize, pin: bool) -> chili::ThreadPool {
    with_new_threads_pinned(
        pin,
        || {
            chili::ThreadPool::with_config(chili::Config {
                thread_count: std::num::NonZero::new(t),
                ..Default::default()
            })
        },
        |k, _| k + 1 < t,
    )
}

/// A forte pool for `t` threads: `t − 1` managed workers (named `worker N`; the heartbeat
/// thread is `heartbeat`) that the caller joins through `with_worker`; with `pin`, they run on
/// cores 1, 2, …. Forte's pools must be `'static`, so this one is leaked. It is not shrunk at
/// the end either: forte 1.0.0-alpha.4 deadlocks when a pool shrinks while its heartbeat
/// thread sleeps (it joins that thread while holding the lock the thread needs); its idle
/// workers sleep.
///
/// Its heartbeat thread does not: it wakes every 100 µs for as long as the pool has workers,
/// also while other runtimes are being timed. On a 2-core machine that took a tenth off the
/// other rows' 2-thread speedups (`taskpools queens`, `private-deque`: 1.38× the sequential
/// search with the heartbeat awake, 1.55× at rest; medians of 5 invocations). So between forte's
/// runs ([`Forte::run`]) the heartbeat thread is put to rest with the `SCHED_IDLE` policy: it
/// then runs only on an otherwise idle core, and does not preempt the runs being timed.
pub fn forte_pool(t: usize, pin: bool) -> Forte {
    let pool: &'static forte::ThreadPool = Box::leak(Box::new(forte::ThreadPool::new()));
    let (_, new) = pinned_new_threads(
        pin,
        || pool.resize_to(t - 1),
        |_, name| name.starts_with("worker"),
    );
    // Forte names the thread `heartbeat`, from inside it; if it has not run yet, it is the
    // one new thread that is not a worker (the barrier of `resize_to` waits for the workers).
    let others: Vec<i32> = new
        .iter()
        .filter(|(_, name)| !name.starts_with("worker"))
        .map(|&(tid, _)| tid)
        .collect();
    let found = new
        .iter()
        .find(|(_, name)| name == "heartbeat")
        .map(|&(tid, _)| tid)
        .or(match others[..] {
            [tid] => Some(tid),
            _ => None,
        });
    let heartbeat = match found {
        Some(tid) if can_rest() => {
            rest(tid, true);
            Some(tid)
        }
        Some(_) => {
            note_once(
                "forte's heartbeat thread stays awake between forte's runs (this process may not \
                 restore a thread's scheduling policy from SCHED_IDLE: that takes CAP_SYS_NICE or \
                 an RLIMIT_NICE of 20): it costs the other runtimes' rows up to a tenth of \
                 their speedup at 2 or more threads",
            );
            None
        }
        None if t > 1 && cfg!(target_os = "linux") => {
            note_once(
                "forte's heartbeat thread was not found: it stays awake between forte's runs, \
                 and costs the other runtimes' rows up to a tenth of their speedup at 2 or more \
                 threads",
            );
            None
        }
        None => None,
    };
    Forte {
        pool,
        heartbeat,
        runs: std::sync::atomic::AtomicUsize::new(0),
    }
}

/// Prints `msg` as a note on stderr, once per process and message.
fn note_once(msg: &'static str) {
    static SEEN: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if !seen.contains(&msg) {
        seen.push(msg);
        eprintln!("note: {msg}");
    }
}

/// Whether this process may put a thread to rest and wake it again: tried once, on a thread
/// of its own (as an unprivileged user, leaving `SCHED_IDLE` takes an `RLIMIT_NICE` of 20).
fn can_rest() -> bool {
    static CAN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *CAN.get_or_init(|| {
        #[cfg(target_os = "linux")]
        {
            std::thread::spawn(|| {
                // SAFETY: `gettid` has no preconditions.
                let tid = unsafe { libc::gettid() };
                rest(tid, true) && rest(tid, false)
            })
            .join()
            .unwrap_or(false)
        }
        #[cfg(not(target_os = "linux"))]
        {
            false
        }
    })
}

/// A forte pool whose heartbeat thread rests between runs (see [`forte_pool`]).
pub struct Forte {
    pool: &'static forte::ThreadPool,
    /// The heartbeat thread's id, if it rests between runs.
    heartbeat: Option<i32>,
    /// Runs going on (the heartbeat rests when none is).
    runs: std::sync::atomic::AtomicUsize,
}

impl Forte {
    /// Runs `f` on the pool with its heartbeat thread awake.
    pub fn run<R>(&self, f: impl FnOnce(&'static forte::ThreadPool) -> R) -> R {
        use std::sync::atomic::Ordering::SeqCst;
        /// Puts the heartbeat back to rest when the last run ends (also by a panic).
        struct Rest<'a>(&'a Forte);
        impl Drop for Rest<'_> {
            fn drop(&mut self) {
                if let Some(tid) = self.0.heartbeat {
                    if self.0.runs.fetch_sub(1, SeqCst) == 1 {
                        rest(tid, true);
                    }
                }
            }
        }
        if let Some(tid) = self.heartbeat {
            if self.runs.fetch_add(1, SeqCst) == 0 && !rest(tid, false) {
                note_once(
                    "forte's heartbeat thread could not be woken for a forte run: \
                     forte's figures in this run are too low",
                );
            }
        }
        let _rest = Rest(self);
        f(self.pool)
    }
}

/// Sets thread `tid`'s scheduling policy to `SCHED_IDLE` (`rest`) or back to the default
/// `SCHED_OTHER`; returns whether that worked (Linux; elsewhere, false).
fn rest(tid: i32, rest: bool) -> bool {
    #[cfg(target_os = "linux")]
    {
        let policy = if rest {
            libc::SCHED_IDLE
        } else {
            libc::SCHED_OTHER
        };
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: `param` is a valid `sched_param` that the call only reads. `tid` is a thread
        // of this process that is never joined (forte's pools are leaked and never shrunk),
        // or the probe's own thread while it runs, so the id names that thread.
        unsafe { libc::sched_setscheduler(tid, policy, &param) == 0 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (tid, rest);
        false
    }
}

/// One rayon pool per thread count, worker `i` pinned to core `i mod cores` when `pin`.
pub fn rayon_pools(threads: &[usize], pin: bool) -> anyhow::Result<Vec<rayon::ThreadPool>> {
    let pin_to = pinner(pin);
    Ok(threads
        .iter()
        .map(|&t| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .start_handler(pin_to.clone())
                .build()
        })
        .collect::<Result<_, _>>()?)
}

/// One of our runtimes (default pool) per thread count, worker `i` pinned to core
/// `i mod cores` when `pin`.
pub fn our_runtimes(threads: &[usize], pin: bool) -> anyhow::Result<Vec<taskpools::Runtime>> {
    runtimes_with(threads, pin, None, None)
}

/// One of our runtimes per thread count, on `pool` (the default if `None`), recording a
/// schedule trace of `trace` events per worker if given.
pub fn runtimes_with(
    threads: &[usize],
    pin: bool,
    pool: Option<taskpools::forkjoin::Pool>,
    trace: Option<usize>,
) -> anyhow::Result<Vec<taskpools::Runtime>> {
    Ok(threads
        .iter()
        .map(|&t| {
            let mut b = taskpools::Runtime::builder().threads(t).pin(pin);
            if let Some(pool) = pool {
                b = b.pool(pool);
            }
            if let Some(cap) = trace {
                b = b.trace(cap);
            }
            b.build()
        })
        .collect::<Result<_, _>>()?)
}

#[cfg(test)]
mod tests {
    /// A thread pinned to core 0 runs on every start-up core again after `unpin_current`, and
    /// so do the threads it spawns then.
    #[cfg(target_os = "linux")]
    #[test]
    fn unpin_gives_back_every_core() {
        let Some(cores) = super::cores() else { return };
        // The calling thread's affinity mask, counted (`available_parallelism` would also
        // count a cgroup's CPU quota, which is not what pinning changes).
        let width = || {
            // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity writes at
            // most its size into it, for the calling thread (pid 0).
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                assert_eq!(
                    libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set),
                    0
                );
                libc::CPU_COUNT(&set) as usize
            }
        };
        std::thread::spawn(move || {
            super::pinner(true)(0);
            assert_eq!(width(), 1);
            super::unpin_current();
            assert_eq!(width(), cores.len());
            assert_eq!(std::thread::spawn(width).join().unwrap(), cores.len());
        })
        .join()
        .unwrap();
    }
}

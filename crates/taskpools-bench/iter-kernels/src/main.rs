//! `taskpools-iter-kernels`: runs one kernel of `taskpools iter` in this process and prints
//! its timings as one line of JSON. The same source is built against stock rayon and against
//! rayon patched onto taskpools (`scripts/build-iter-kernels.sh`); `taskpools iter` runs the
//! two binaries in alternated processes.
//!
//! ```text
//! taskpools-iter-kernels --info
//! taskpools-iter-kernels KERNEL --runtime sequential|rayon --threads N --scale F --runs R
//!     [--warmup W]
//! ```
//!
//! `--info` prints which rayon-core the binary was built with. The marker is
//! `rayon::max_num_threads()`: 4096 on taskpools (`taskpools::MAX_THREADS`), 65535 on stock
//! rayon-core 1.13 on 64-bit targets (its sleep counters' limit).
//!
//! A run builds the input (not timed), then on `rayon` a pool of `--threads` workers
//! (`rayon::ThreadPoolBuilder::num_threads`), runs the kernel `--warmup` times (1) untimed and
//! `--runs` times timed, inside `install`; on `sequential` the plain loops on this thread. Each run's
//! result is checked; a wrong result exits with status 1 and one line on stderr.

mod kernels;

use std::process::ExitCode;

/// `rayon::max_num_threads()` of the drop-in rayon-core on taskpools.
const TASKPOOLS_MAX_THREADS: usize = 4096;

fn rayon_core() -> &'static str {
    match rayon::max_num_threads() {
        TASKPOOLS_MAX_THREADS => "taskpools",
        65535 | 255 => "rayon",
        _ => "unknown",
    }
}

struct Args {
    kernel: String,
    par: bool,
    threads: usize,
    scale: f64,
    runs: usize,
    warmup: usize,
}

fn parse() -> Result<Option<Args>, String> {
    let mut it = std::env::args().skip(1);
    let mut a = Args {
        kernel: String::new(),
        par: false,
        threads: 1,
        scale: 1.0,
        runs: 3,
        warmup: 1,
    };
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--info" => return Ok(None),
            "--runtime" => {
                a.par = match value("--runtime")?.as_str() {
                    "sequential" => false,
                    "rayon" => true,
                    r => return Err(format!("--runtime {r}: sequential or rayon")),
                }
            }
            "--threads" => {
                a.threads = value("--threads")?
                    .parse()
                    .map_err(|e| format!("--threads: {e}"))?
            }
            "--scale" => {
                a.scale = value("--scale")?
                    .parse()
                    .map_err(|e| format!("--scale: {e}"))?
            }
            "--runs" => {
                a.runs = value("--runs")?
                    .parse()
                    .map_err(|e| format!("--runs: {e}"))?
            }
            "--warmup" => {
                a.warmup = value("--warmup")?
                    .parse()
                    .map_err(|e| format!("--warmup: {e}"))?
            }
            k if !k.starts_with('-') && a.kernel.is_empty() => a.kernel = k.to_string(),
            other => return Err(format!("unexpected argument {other}")),
        }
    }
    if kernels::default_size(&a.kernel).is_none() {
        return Err(format!(
            "kernel {:?}: one of {}",
            a.kernel,
            kernels::KERNELS.join(", ")
        ));
    }
    if !(a.scale > 0.0 && a.scale <= 4.0) {
        return Err(format!("--scale {}: more than 0, at most 4", a.scale));
    }
    if !(1..=4096).contains(&a.threads) || !(1..=1000).contains(&a.runs) || a.warmup > 1000 {
        return Err("--threads 1 to 4096, --runs 1 to 1000, --warmup 0 to 1000".into());
    }
    Ok(Some(a))
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(Some(a)) => a,
        Ok(None) => {
            println!(
                "{{\"rayon_core\":\"{}\",\"max_num_threads\":{}}}",
                rayon_core(),
                rayon::max_num_threads()
            );
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    match measure(&args) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn measure(a: &Args) -> Result<String, String> {
    let k = a.kernel.as_str();
    let size = kernels::size_at(k, a.scale).ok_or("no size")?;
    let input = kernels::input(k, size)?;
    let pool = if a.par {
        Some(
            rayon::ThreadPoolBuilder::new()
                .num_threads(a.threads)
                .build()
                .map_err(|e| format!("building the pool: {e}"))?,
        )
    } else {
        None
    };
    let once = || match &pool {
        Some(p) => p.install(|| {
            if rayon::current_num_threads() != a.threads {
                return Err(format!(
                    "the pool has {} threads, not {}",
                    rayon::current_num_threads(),
                    a.threads
                ));
            }
            kernels::run(k, &input, true)
        }),
        None => kernels::run(k, &input, false),
    };
    let mut checksum = None;
    let mut times = Vec::with_capacity(a.runs);
    for i in 0..a.warmup + a.runs {
        let (secs, sum) = once()?;
        match checksum {
            None => checksum = Some(sum),
            Some(c) if c != sum => {
                return Err(format!(
                    "{k}: checksum {sum:016x} differs from the first run's {c:016x}"
                ))
            }
            Some(_) => {}
        }
        if i >= a.warmup {
            times.push(format!("{secs:.9}"));
        }
    }
    let checksum = checksum.unwrap_or(0);
    // Pieces per run (the warm-up runs included), where the kernel counts them.
    let pieces = kernels::WORDFREQ_PIECES.load(std::sync::atomic::Ordering::Relaxed);
    let pieces = if k == "wordfreq" && a.par {
        format!("{}", pieces as f64 / (a.warmup + a.runs) as f64)
    } else {
        "null".into()
    };
    Ok(format!(
        "{{\"kernel\":\"{k}\",\"rayon_core\":\"{}\",\"runtime\":\"{}\",\"threads\":{},\
         \"size\":{size},\"times_s\":[{}],\"checksum\":\"{checksum:016x}\",\
         \"pieces\":{pieces}}}",
        rayon_core(),
        if a.par { "rayon" } else { "sequential" },
        if a.par { a.threads } else { 1 },
        times.join(",")
    ))
}

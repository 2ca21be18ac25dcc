//! The machine's topology, read at run time: which hardware threads (CPUs) share a physical
//! core, a last-level cache, a NUMA node, a package. On Linux it comes from sysfs
//! (`/sys/devices/system/cpu` and `/sys/devices/system/node`), with no extra system package;
//! elsewhere, or where sysfs cannot be read, every CPU is its own core in one package.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::Error;

/// One hardware thread (a CPU as the operating system numbers it) and what it shares.
///
/// ```
/// use taskpools::places::Topology;
///
/// # let laptop = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sysfs/laptop-4c8t");
/// let topo = Topology::from_sysfs(laptop)?;
/// let cpu5 = &topo.cpus()[5];
/// assert_eq!((cpu5.id, cpu5.core, cpu5.package), (5, 1, 0)); // CPU 5 is core 1's sibling
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cpu {
    /// The operating system's CPU number (what pinning uses).
    pub id: usize,
    /// The physical core: CPUs with the same value are SMT siblings (numbered from 0, in
    /// order of each group's first CPU).
    pub core: usize,
    /// The last-level cache this CPU uses (numbered from 0 like `core`).
    pub llc: usize,
    /// The NUMA node (the kernel's node number; 0 where there is none).
    pub node: usize,
    /// The package (socket), the kernel's `physical_package_id`.
    pub package: usize,
}

/// A level of the topology that places can be made of (the names of `OMP_PLACES`).
///
/// ```
/// use taskpools::places::{Level, Places, Topology};
///
/// # let laptop = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sysfs/laptop-4c8t");
/// let topo = Topology::from_sysfs(laptop)?;
/// let places: Vec<usize> = Level::ALL.iter().map(|&l| topo.groups(l).len()).collect();
/// assert_eq!(places, [8, 4, 1, 1, 1]); // threads, cores, caches, nodes, packages
/// assert_eq!(Places::from_topology(&topo, Level::Cores).len(), 4);
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Level {
    /// One place per hardware thread (`threads`).
    Threads,
    /// One place per physical core, holding its SMT siblings (`cores`).
    Cores,
    /// One place per last-level cache (`ll_caches`).
    LlCaches,
    /// One place per NUMA node (`numa_domains`).
    NumaDomains,
    /// One place per package (`sockets`, alias `packages`).
    Packages,
}

impl Level {
    /// Every level, finest first.
    pub const ALL: [Level; 5] = [
        Level::Threads,
        Level::Cores,
        Level::LlCaches,
        Level::NumaDomains,
        Level::Packages,
    ];

    /// The `OMP_PLACES` name.
    ///
    /// ```
    /// use taskpools::places::Level;
    ///
    /// assert_eq!(Level::NumaDomains.name(), "numa_domains");
    /// assert_eq!(Level::Packages.name(), "sockets");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Level::Threads => "threads",
            Level::Cores => "cores",
            Level::LlCaches => "ll_caches",
            Level::NumaDomains => "numa_domains",
            Level::Packages => "sockets",
        }
    }

    /// The level with this name (`packages` is accepted for `sockets`).
    ///
    /// ```
    /// use taskpools::places::Level;
    ///
    /// assert_eq!(Level::from_name("ll_caches"), Some(Level::LlCaches));
    /// assert_eq!(Level::from_name("packages"), Some(Level::Packages));
    /// assert_eq!(Level::from_name("rooms"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Level> {
        match name {
            "packages" => Some(Level::Packages),
            _ => Level::ALL.into_iter().find(|l| l.name() == name),
        }
    }
}

/// The CPUs of a machine and what they share; see the [module docs](self).
///
/// ```
/// use taskpools::places::{Level, Topology};
///
/// # let laptop = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sysfs/laptop-4c8t");
/// let topo = Topology::from_sysfs(laptop)?;
/// assert_eq!(topo.cpus().len(), 8);
/// assert_eq!(topo.groups(Level::Cores), [[0, 4], [1, 5], [2, 6], [3, 7]]);
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    cpus: Vec<Cpu>,
}

impl Topology {
    /// This machine's topology, restricted to the CPUs this process may run on. Read from
    /// sysfs on Linux; where that fails (or on other systems), every CPU the process may use
    /// is its own core in one package, node and cache.
    ///
    /// ```
    /// use taskpools::places::{Level, Topology};
    ///
    /// let here = Topology::detect();
    /// assert!(!here.cpus().is_empty());
    /// // Every CPU is in exactly one core.
    /// let cores = here.groups(Level::Cores);
    /// assert_eq!(cores.iter().map(Vec::len).sum::<usize>(), here.cpus().len());
    /// ```
    pub fn detect() -> Topology {
        let allowed = super::cores::process_core_ids();
        // sysfs is Linux's (Android's too); elsewhere the flat topology, without a look.
        #[cfg(any(target_os = "linux", target_os = "android"))]
        let mut t = Topology::from_sysfs("/sys").unwrap_or_else(|_| Topology::flat(&allowed));
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        let mut t = Topology::flat(&allowed);
        if !allowed.is_empty() {
            t.cpus.retain(|c| allowed.contains(&c.id));
            if t.cpus.is_empty() {
                t = Topology::flat(&allowed);
            }
        }
        t
    }

    /// One core, cache, node and package per CPU id (the fallback).
    fn flat(ids: &[usize]) -> Topology {
        let ids: Vec<usize> = if ids.is_empty() {
            (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect()
        } else {
            ids.to_vec()
        };
        Topology {
            cpus: ids
                .iter()
                .enumerate()
                .map(|(i, &id)| Cpu {
                    id,
                    core: i,
                    llc: 0,
                    node: 0,
                    package: 0,
                })
                .collect(),
        }
    }

    /// The topology recorded under `root`, a directory laid out like Linux's `/sys`: the
    /// online CPUs from `devices/system/cpu/online`, each CPU's `topology/physical_package_id`
    /// and `topology/thread_siblings_list`, its caches (`cache/index*/{level,type,
    /// shared_cpu_list}`, the highest data or unified level is the last-level cache; none
    /// listed: the package), and the NUMA nodes' `devices/system/node/node*/cpulist` (none:
    /// node 0). The tests read recorded trees of several machines this way.
    ///
    /// ```
    /// use taskpools::places::{Level, Topology};
    ///
    /// // A two-socket server recorded from its /sys: 2 × 8 cores × 2 hardware threads.
    /// let root = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sysfs/xeon-2s-numa");
    /// let topo = Topology::from_sysfs(root)?;
    /// assert_eq!(topo.cpus().len(), 32);
    /// assert_eq!(topo.groups(Level::NumaDomains).len(), 2);
    /// assert!(Topology::from_sysfs("/nonexistent").is_err());
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn from_sysfs(root: impl AsRef<Path>) -> Result<Topology, Error> {
        let cpu_dir = root.as_ref().join("devices/system/cpu");
        let online = parse_cpu_list(&read(&cpu_dir.join("online"))?)
            .map_err(|why| topo_err(&cpu_dir.join("online"), &why))?;
        let node_dir = root.as_ref().join("devices/system/node");
        let mut node_of = BTreeMap::new();
        if let Ok(entries) = std::fs::read_dir(&node_dir) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let Some(n) = name
                    .strip_prefix("node")
                    .and_then(|n| n.parse::<usize>().ok())
                else {
                    continue;
                };
                let path = e.path().join("cpulist");
                for c in parse_cpu_list(&read(&path)?).map_err(|why| topo_err(&path, &why))? {
                    node_of.insert(c, n);
                }
            }
        }
        let mut core_keys: Vec<Vec<usize>> = Vec::new();
        let mut llc_keys: Vec<Vec<usize>> = Vec::new();
        let mut cpus = Vec::with_capacity(online.len());
        for &id in &online {
            let dir = cpu_dir.join(format!("cpu{id}"));
            let package = parse_num(&dir.join("topology/physical_package_id"))?;
            let siblings_path = dir.join("topology/thread_siblings_list");
            let siblings = parse_cpu_list(&read(&siblings_path)?)
                .map_err(|why| topo_err(&siblings_path, &why))?;
            let llc = last_level_cache(&dir)?.unwrap_or_else(|| {
                // No caches listed: the package's CPUs share one.
                let mut v: Vec<usize> = vec![usize::MAX, package];
                v.sort_unstable();
                v
            });
            cpus.push(Cpu {
                id,
                core: key_index(&mut core_keys, siblings),
                llc: key_index(&mut llc_keys, llc),
                node: node_of.get(&id).copied().unwrap_or(0),
                package,
            });
        }
        if cpus.is_empty() {
            return Err(topo_err(&cpu_dir.join("online"), "no CPU is online"));
        }
        Ok(Topology { cpus })
    }

    /// The CPUs, in the order of their ids.
    ///
    /// ```
    /// use taskpools::places::Topology;
    ///
    /// # let laptop = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sysfs/laptop-4c8t");
    /// let topo = Topology::from_sysfs(laptop)?;
    /// let ids: Vec<usize> = topo.cpus().iter().map(|c| c.id).collect();
    /// assert_eq!(ids, [0, 1, 2, 3, 4, 5, 6, 7]);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn cpus(&self) -> &[Cpu] {
        &self.cpus
    }

    /// Whether a CPU with this id is listed.
    ///
    /// ```
    /// use taskpools::places::Topology;
    ///
    /// # let laptop = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sysfs/laptop-4c8t");
    /// let topo = Topology::from_sysfs(laptop)?;
    /// assert!(topo.has_cpu(7) && !topo.has_cpu(8));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn has_cpu(&self, id: usize) -> bool {
        self.cpus.iter().any(|c| c.id == id)
    }

    /// The CPUs grouped at `level`: one group per core, cache, node or package, each listing
    /// its CPU ids in increasing order, groups in the order of their first CPU.
    ///
    /// ```
    /// use taskpools::places::{Level, Topology};
    ///
    /// # let laptop = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sysfs/laptop-4c8t");
    /// let topo = Topology::from_sysfs(laptop)?;
    /// assert_eq!(topo.groups(Level::Packages), [[0, 1, 2, 3, 4, 5, 6, 7]]);
    /// assert_eq!(topo.groups(Level::Cores)[2], [2, 6]);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn groups(&self, level: Level) -> Vec<Vec<usize>> {
        let key = |c: &Cpu| match level {
            Level::Threads => c.id,
            Level::Cores => c.core,
            Level::LlCaches => c.llc,
            Level::NumaDomains => c.node,
            Level::Packages => c.package,
        };
        let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
        let mut sorted = self.cpus.clone();
        sorted.sort_by_key(|c| c.id);
        for c in &sorted {
            match groups.iter_mut().find(|(k, _)| *k == key(c)) {
                Some((_, g)) => g.push(c.id),
                None => groups.push((key(c), vec![c.id])),
            }
        }
        groups.into_iter().map(|(_, g)| g).collect()
    }
}

/// The index of `key` in `keys`, added if new.
fn key_index(keys: &mut Vec<Vec<usize>>, key: Vec<usize>) -> usize {
    match keys.iter().position(|k| *k == key) {
        Some(i) => i,
        None => {
            keys.push(key);
            keys.len() - 1
        }
    }
}

/// The CPUs sharing this CPU's highest-level data or unified cache, if caches are listed.
fn last_level_cache(cpu_dir: &Path) -> Result<Option<Vec<usize>>, Error> {
    let mut best: Option<(u32, Vec<usize>)> = None;
    for i in 0.. {
        let dir = cpu_dir.join(format!("cache/index{i}"));
        if !dir.is_dir() {
            break;
        }
        if read(&dir.join("type"))?.trim() == "Instruction" {
            continue;
        }
        let level = parse_num(&dir.join("level"))? as u32;
        let path = dir.join("shared_cpu_list");
        let shared = parse_cpu_list(&read(&path)?).map_err(|why| topo_err(&path, &why))?;
        if best.as_ref().is_none_or(|(l, _)| level > *l) {
            best = Some((level, shared));
        }
    }
    Ok(best.map(|(_, s)| s))
}

fn read(path: &Path) -> Result<String, Error> {
    std::fs::read_to_string(path).map_err(|e| topo_err(path, &e.to_string()))
}

fn parse_num(path: &Path) -> Result<usize, Error> {
    let s = read(path)?;
    s.trim()
        .parse()
        .map_err(|_| topo_err(path, &format!("`{}` is not a number", s.trim())))
}

fn topo_err(path: &Path, why: &str) -> Error {
    Error::Topology {
        path: PathBuf::from(path),
        why: why.to_string(),
    }
}

/// The longest CPU range a list may hold (Linux's own limit, `NR_CPUS`, is at most 8192).
const MAX_CPU_RANGE: usize = 1 << 16;

/// Parses a Linux CPU list (`0-3,8,10-11`) into increasing ids. An empty list is allowed
/// (a node without CPUs).
pub(crate) fn parse_cpu_list(s: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.trim().is_empty()) {
        let part = part.trim();
        let num = |t: &str| {
            t.trim()
                .parse::<usize>()
                .map_err(|_| format!("`{t}` in the CPU list `{}` is not a number", s.trim()))
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(format!("the range `{part}` runs backwards"));
                }
                if b - a >= MAX_CPU_RANGE {
                    return Err(format!(
                        "the range `{part}` lists more than {MAX_CPU_RANGE} CPUs"
                    ));
                }
                out.extend(a..=b);
            }
            None => out.push(num(part)?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

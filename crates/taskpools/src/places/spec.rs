//! [`Places`]: which workers make up each place, and the cores they are pinned to; parsed
//! from a description string or built from the machine's topology.

use super::topology::{parse_cpu_list, Level, Topology};
use crate::Error;

/// The places of a runtime: for each place, its workers, each pinned to a core or (for a
/// shape like `2x4`) pinned round-robin over the process's cores when the runtime pins.
/// See the [module docs](super) for the description syntax.
///
/// ```
/// use taskpools::places::Places;
///
/// let p: Places = "2x3".parse()?;
/// assert_eq!((p.len(), p.workers()), (2, 6));
/// assert_eq!(p.to_string(), "2x3 = {*,*,*},{*,*,*}");
/// let rt = taskpools::Runtime::builder().places(Places::parse("2x1")?).build()?;
/// assert_eq!((rt.threads(), rt.place_count()), (2, 2));
/// # Ok::<(), taskpools::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Places {
    /// Per place, per worker: the core it is pinned to (`None`: a virtual place).
    places: Vec<Vec<Option<usize>>>,
    spec: String,
}

impl Places {
    /// Parses a description on this machine's [`Topology::detect`]:
    /// - `NxM`: `N` places of `M` workers each (virtual: workers are pinned round-robin over
    ///   the process's cores when the runtime pins, so any shape runs on any machine);
    /// - `{0,1},{2-3},{4:2}`: one place per brace, listing cores (`a-b` a range, `a:n` the
    ///   `n` cores from `a`, as in `OMP_PLACES`); each core gets one worker, pinned to it;
    /// - `threads`, `cores`, `ll_caches`, `numa_domains`, `sockets` (alias `packages`): one
    ///   place per hardware thread, core, last-level cache, NUMA node or package, one worker
    ///   per hardware thread in it.
    ///
    /// Refused with [`Error::BadPlaces`], naming the problem: an empty place, a core listed
    /// twice, a core this process cannot run on, zero places or workers, more than
    /// [`MAX_THREADS`](crate::MAX_THREADS) workers, or an unknown name.
    ///
    /// ```
    /// use taskpools::places::Places;
    /// use taskpools::Error;
    ///
    /// assert_eq!(Places::parse("2x4")?.workers(), 8); // virtual: any machine
    /// assert!(Places::parse("threads")?.workers() >= 1); // one place per hardware thread here
    /// assert!(matches!(Places::parse("{0},{0}"), Err(Error::BadPlaces { .. }))); // core 0 twice
    /// assert!(Places::parse("0x4").is_err());
    /// assert!(Places::parse("rooms").is_err());
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn parse(spec: &str) -> Result<Places, Error> {
        Places::parse_on(spec, &Topology::detect())
    }

    /// [`parse`](Self::parse) against a given topology (a recorded machine, in tests).
    ///
    /// ```
    /// use taskpools::places::{Places, Topology};
    ///
    /// # let laptop = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sysfs/laptop-4c8t");
    /// // A recorded laptop: 4 cores of 2 hardware threads (siblings 4 apart).
    /// let topo = Topology::from_sysfs(laptop)?;
    /// let p = Places::parse_on("cores", &topo)?;
    /// assert_eq!(p.layout(), "{0,4},{1,5},{2,6},{3,7}");
    /// assert_eq!(Places::parse_on("{0:2},{4-5}", &topo)?.layout(), "{0,1},{4,5}");
    /// assert!(Places::parse_on("{8}", &topo).is_err()); // no CPU 8 there
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn parse_on(spec: &str, topo: &Topology) -> Result<Places, Error> {
        let bad = |why: String| Error::BadPlaces {
            spec: spec.to_string(),
            why,
        };
        let s = spec.trim();
        if s.is_empty() {
            return Err(bad("the description is empty".into()));
        }
        if let Some(level) = Level::from_name(s) {
            return Ok(Places::from_topology(topo, level));
        }
        if let Some((n, m)) = s.split_once(['x', 'X']) {
            if !s.contains('{') {
                let num = |t: &str, what: &str| {
                    t.trim()
                        .parse::<usize>()
                        .map_err(|_| bad(format!("`{}` is not a number of {what}", t.trim())))
                };
                let (n, m) = (num(n, "places")?, num(m, "workers per place")?);
                return Places::uniform(n, m).map_err(|e| match e {
                    Error::BadPlaces { why, .. } => bad(why),
                    e => e,
                });
            }
        }
        if s.starts_with('{') {
            let mut lists = Vec::new();
            let mut rest = s;
            while !rest.is_empty() {
                let Some(body) = rest.strip_prefix('{') else {
                    return Err(bad(format!(
                        "expected `{{` at `{rest}` (places are brace lists separated by commas)"
                    )));
                };
                let Some(end) = body.find('}') else {
                    return Err(bad("a `{` is not closed".into()));
                };
                let inner = &body[..end];
                let mut cores = Vec::new();
                for item in inner.split(',').map(str::trim) {
                    if item.is_empty() {
                        continue;
                    }
                    match item.split_once(':') {
                        Some((a, n)) => {
                            let a: usize = a
                                .trim()
                                .parse()
                                .map_err(|_| bad(format!("`{item}`: `{a}` is not a core")))?;
                            let n: usize = n.trim().parse().map_err(|_| {
                                bad(format!("`{item}`: `{n}` is not a number of cores"))
                            })?;
                            if n > crate::MAX_THREADS {
                                return Err(bad(format!(
                                    "`{item}`: more than {} cores",
                                    crate::MAX_THREADS
                                )));
                            }
                            let end = a.checked_add(n).ok_or_else(|| {
                                bad(format!(
                                    "`{item}`: core {a} + {n} overflows: too large for a core id"
                                ))
                            })?;
                            cores.extend(a..end);
                        }
                        None => cores.extend(parse_cpu_list(item).map_err(bad)?),
                    }
                }
                if cores.is_empty() {
                    return Err(bad(format!("place {} is empty", lists.len())));
                }
                lists.push(cores);
                rest = body[end + 1..].trim_start();
                if let Some(r) = rest.strip_prefix(',') {
                    rest = r.trim_start();
                    if rest.is_empty() {
                        return Err(bad("a trailing comma".into()));
                    }
                }
            }
            return Places::explicit(&lists, topo).map_err(|e| match e {
                Error::BadPlaces { why, .. } => bad(why),
                e => e,
            });
        }
        Err(bad(format!(
            "not a shape (`2x4`), a list of cores per place (`{{0,1}},{{2,3}}`) or one of {}",
            Level::ALL.map(Level::name).join(", ")
        )))
    }

    /// `places` virtual places of `workers` workers each.
    ///
    /// ```
    /// use taskpools::places::Places;
    ///
    /// let p = Places::uniform(3, 2)?;
    /// assert_eq!(p, Places::parse("3x2")?);
    /// assert_eq!(p.place_of_workers(), [0, 0, 1, 1, 2, 2]);
    /// assert!(Places::uniform(0, 2).is_err());
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn uniform(places: usize, workers: usize) -> Result<Places, Error> {
        let spec = format!("{places}x{workers}");
        let bad = |why: String| Error::BadPlaces {
            spec: spec.clone(),
            why,
        };
        if places == 0 || workers == 0 {
            return Err(bad(
                "a runtime needs at least one place of one worker".into()
            ));
        }
        let total = places.saturating_mul(workers);
        if total > crate::MAX_THREADS {
            return Err(bad(format!(
                "{total} workers is more than the limit of {}",
                crate::MAX_THREADS
            )));
        }
        Ok(Places {
            places: vec![vec![None; workers]; places],
            spec,
        })
    }

    /// One place per list of cores, each core one worker pinned to it. Every core must be
    /// one `topo` lists, and in one place only.
    ///
    /// ```
    /// use taskpools::places::{Places, Topology};
    ///
    /// # let laptop = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sysfs/laptop-4c8t");
    /// let topo = Topology::from_sysfs(laptop)?;
    /// let p = Places::explicit(&[vec![0, 4], vec![1, 5]], &topo)?;
    /// assert_eq!((p.spec(), p.workers()), ("{0,4},{1,5}", 4));
    /// assert!(Places::explicit(&[vec![0], vec![0]], &topo).is_err()); // one core, two places
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn explicit(lists: &[Vec<usize>], topo: &Topology) -> Result<Places, Error> {
        let spec = lists
            .iter()
            .map(|l| {
                format!(
                    "{{{}}}",
                    l.iter()
                        .map(|c| c.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                )
            })
            .collect::<Vec<_>>()
            .join(",");
        let bad = |why: String| Error::BadPlaces {
            spec: spec.clone(),
            why,
        };
        if lists.is_empty() {
            return Err(bad("no places".into()));
        }
        let mut seen = std::collections::BTreeMap::new();
        for (p, l) in lists.iter().enumerate() {
            if l.is_empty() {
                return Err(bad(format!("place {p} is empty")));
            }
            for &c in l {
                if !topo.has_cpu(c) {
                    let known: Vec<String> = topo.cpus().iter().map(|c| c.id.to_string()).collect();
                    return Err(bad(format!(
                        "core {c} does not exist here (this process may use cores {})",
                        known.join(",")
                    )));
                }
                if let Some(q) = seen.insert(c, p) {
                    return Err(bad(if q == p {
                        format!("core {c} is listed twice in place {p}")
                    } else {
                        format!("core {c} is in two places ({q} and {p})")
                    }));
                }
            }
        }
        if seen.len() > crate::MAX_THREADS {
            return Err(bad(format!(
                "{} workers is more than the limit of {}",
                seen.len(),
                crate::MAX_THREADS
            )));
        }
        Ok(Places {
            places: lists
                .iter()
                .map(|l| l.iter().map(|&c| Some(c)).collect())
                .collect(),
            spec,
        })
    }

    /// One place per group of `topo` at `level`, one worker per hardware thread.
    ///
    /// ```
    /// use taskpools::places::{Level, Places, Topology};
    ///
    /// # let laptop = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sysfs/laptop-4c8t");
    /// let topo = Topology::from_sysfs(laptop)?;
    /// let p = Places::from_topology(&topo, Level::Packages);
    /// assert_eq!((p.len(), p.workers(), p.spec()), (1, 8, "sockets"));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn from_topology(topo: &Topology, level: Level) -> Places {
        Places {
            places: topo
                .groups(level)
                .into_iter()
                .map(|g| g.into_iter().map(Some).collect())
                .collect(),
            spec: level.name().to_string(),
        }
    }

    /// Number of places.
    ///
    /// ```
    /// assert_eq!(taskpools::places::Places::parse("4x2")?.len(), 4);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.places.len()
    }

    /// Always false: a description has at least one place.
    ///
    /// ```
    /// assert!(!taskpools::places::Places::parse("1x1")?.is_empty());
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.places.is_empty()
    }

    /// Number of workers over all places.
    ///
    /// ```
    /// assert_eq!(taskpools::places::Places::parse("4x2")?.workers(), 8);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn workers(&self) -> usize {
        self.places.iter().map(Vec::len).sum()
    }

    /// The cores of place `p`'s workers (`None` for a virtual place's).
    ///
    /// ```
    /// use taskpools::places::{Places, Topology};
    ///
    /// # let laptop = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sysfs/laptop-4c8t");
    /// let topo = Topology::from_sysfs(laptop)?;
    /// assert_eq!(Places::parse_on("cores", &topo)?.cores(1), [Some(1), Some(5)]);
    /// assert_eq!(Places::parse("2x2")?.cores(0), [None, None]); // virtual
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn cores(&self, p: usize) -> &[Option<usize>] {
        &self.places[p]
    }

    /// The place of each worker, in worker order (workers are numbered place by place).
    ///
    /// ```
    /// let p = taskpools::places::Places::parse("2x3")?;
    /// assert_eq!(p.place_of_workers(), [0, 0, 0, 1, 1, 1]);
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn place_of_workers(&self) -> Vec<usize> {
        self.places
            .iter()
            .enumerate()
            .flat_map(|(p, w)| std::iter::repeat_n(p, w.len()))
            .collect()
    }

    /// The description this was made from (`2x1`, `{0,1},{2,3}`, `cores`).
    ///
    /// ```
    /// use taskpools::places::Places;
    ///
    /// assert_eq!(Places::parse(" 2x3 ")?.spec(), "2x3");
    /// assert_eq!(Places::uniform(1, 4)?.spec(), "1x4");
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn spec(&self) -> &str {
        &self.spec
    }

    /// The places as core lists, `{0,1},{2,3}` (a virtual place's workers show as `*`).
    ///
    /// ```
    /// assert_eq!(taskpools::places::Places::parse("2x2")?.layout(), "{*,*},{*,*}");
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn layout(&self) -> String {
        self.places
            .iter()
            .map(|w| {
                let cores: Vec<String> = w
                    .iter()
                    .map(|c| c.map_or("*".to_string(), |c| c.to_string()))
                    .collect();
                format!("{{{}}}", cores.join(","))
            })
            .collect::<Vec<_>>()
            .join(",")
    }
}

impl std::fmt::Display for Places {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} = {}", self.spec, self.layout())
    }
}

impl std::str::FromStr for Places {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Places::parse(s)
    }
}

//! [`Places`]: which workers make up each place, and the cores they are pinned to; parsed
//! from a description string or built from the machine's topology.

use super::topology::{parse_cpu_list, Level, Topology};
use crate::Error;

/// The places of a runtime: for each place, its workers, each pinned to a core or (for a
/// shape like `2x4`) pinned round-robin over the process's cores when the runtime pins.
/// See the [module docs](super) for the description syntax.
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
    pub fn parse(spec: &str) -> Result<Places, Error> {
        Places::parse_on(spec, &Topology::detect())
    }

    /// [`parse`](Self::parse) against a given topology (a recorded machine, in tests).
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
    pub fn len(&self) -> usize {
        self.places.len()
    }

    /// Always false: a description has at least one place.
    pub fn is_empty(&self) -> bool {
        self.places.is_empty()
    }

    /// Number of workers over all places.
    pub fn workers(&self) -> usize {
        self.places.iter().map(Vec::len).sum()
    }

    /// The cores of place `p`'s workers (`None` for a virtual place's).
    pub fn cores(&self, p: usize) -> &[Option<usize>] {
        &self.places[p]
    }

    /// The place of each worker, in worker order (workers are numbered place by place).
    pub fn place_of_workers(&self) -> Vec<usize> {
        self.places
            .iter()
            .enumerate()
            .flat_map(|(p, w)| std::iter::repeat_n(p, w.len()))
            .collect()
    }

    /// The description this was made from (`2x1`, `{0,1},{2,3}`, `cores`).
    pub fn spec(&self) -> &str {
        &self.spec
    }

    /// The places as core lists, `{0,1},{2,3}` (a virtual place's workers show as `*`).
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

//! A [`Trace`] in the Chrome trace-event format (what Perfetto and `chrome://tracing` open).

use super::{EventKind, Source, Trace};

impl Trace {
    /// Appends this trace's events in the Chrome trace-event format (what Perfetto and
    /// `chrome://tracing` open) to `out`, as process `pid` named `name`: one track per
    /// worker, a slice per job (named by where it was found) and per sleep or idle time, a
    /// flow arrow from the victim's track to the thief's for every steal between workers, and
    /// one from the completion that released a data-flow task to that task's start.
    /// Each event is one JSON object followed by a comma and a newline; wrap them with
    /// [`chrome_json`](Self::chrome_json) or as `{"traceEvents":[ … ]}`.
    ///
    /// ```
    /// use taskpools::runtime::trace::wrap_chrome_events;
    /// use taskpools::Runtime;
    ///
    /// // Two runtimes' traces in one file, one process each.
    /// let a = Runtime::builder().threads(1).trace(64).build()?;
    /// let b = Runtime::builder().threads(1).trace(64).build()?;
    /// a.install(|| ());
    /// b.install(|| ());
    /// let mut events = String::new();
    /// a.take_trace()?.unwrap().chrome_events(1, "first", &mut events);
    /// b.take_trace()?.unwrap().chrome_events(2, "second", &mut events);
    /// let json = wrap_chrome_events(&events);
    /// assert!(json.contains("\"pid\":1") && json.contains("\"pid\":2"));
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn chrome_events(&self, pid: u32, name: &str, out: &mut String) {
        use std::fmt::Write;
        let esc = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
        let _ = writeln!(
            out,
            r#"{{"name":"process_name","ph":"M","pid":{pid},"args":{{"name":"{}"}}}},"#,
            esc(name)
        );
        for w in 0..self.workers {
            let _ = writeln!(
                out,
                r#"{{"name":"thread_name","ph":"M","pid":{pid},"tid":{w},"args":{{"name":"worker {w}"}}}},"#
            );
        }
        let us = |t: u64| t as f64 / 1000.0;
        let mut flow = 0u64;
        // Data-flow releases whose task has not started yet: an arrow goes from the release
        // (on the worker that completed the predecessor) to the task's start.
        let mut released = std::collections::HashSet::new();
        let started: std::collections::HashSet<u64> = self
            .events
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::Task { id } => Some(id),
                _ => None,
            })
            .collect();
        for e in &self.events {
            let (w, ts) = (e.worker, us(e.t_ns));
            let instant = |out: &mut String, name: &str, cat: &str, args: &str| {
                let args = if args.is_empty() {
                    String::new()
                } else {
                    format!(r#","args":{{{args}}}"#)
                };
                let _ = writeln!(
                    out,
                    r#"{{"name":"{name}","cat":"{cat}","ph":"i","s":"t","ts":{ts:.3},"pid":{pid},"tid":{w}{args}}},"#
                );
            };
            match e.kind {
                EventKind::Start(src) => {
                    let extra = match src {
                        Source::Steal { victim } => format!(r#","victim":{victim}"#),
                        Source::PoolSteal { victim, tasks } => {
                            format!(r#","victim":{victim},"tasks":{tasks}"#)
                        }
                        Source::PlaceSteal { place } => format!(r#","victim_place":{place}"#),
                        _ => String::new(),
                    };
                    let _ = writeln!(
                        out,
                        r#"{{"name":"{}","cat":"job","ph":"B","ts":{ts:.3},"pid":{pid},"tid":{w},"args":{{"from":"{}"{extra}}}}},"#,
                        src.name(),
                        src.name()
                    );
                    if let Source::Steal { victim } | Source::PoolSteal { victim, .. } = src {
                        flow += 1;
                        let _ = writeln!(
                            out,
                            r#"{{"name":"steal","cat":"steal","ph":"s","id":{flow},"ts":{ts:.3},"pid":{pid},"tid":{victim}}},"#
                        );
                        let _ = writeln!(
                            out,
                            r#"{{"name":"steal","cat":"steal","ph":"f","bp":"e","id":{flow},"ts":{ts:.3},"pid":{pid},"tid":{w}}},"#
                        );
                    }
                }
                EventKind::End | EventKind::Wake | EventKind::Resume => {
                    let _ = writeln!(out, r#"{{"ph":"E","ts":{ts:.3},"pid":{pid},"tid":{w}}},"#);
                }
                EventKind::Idle => {
                    let _ = writeln!(
                        out,
                        r#"{{"name":"idle","cat":"idle","ph":"B","ts":{ts:.3},"pid":{pid},"tid":{w}}},"#
                    );
                }
                EventKind::Put => instant(out, "put", "phase", ""),
                EventKind::Sleep => {
                    let _ = writeln!(
                        out,
                        r#"{{"name":"sleep","cat":"idle","ph":"B","ts":{ts:.3},"pid":{pid},"tid":{w}}},"#
                    );
                }
                EventKind::Task { id } => {
                    instant(out, "task", "dataflow", &format!(r#""id":{id}"#));
                    if released.remove(&id) {
                        let _ = writeln!(
                            out,
                            r#"{{"name":"release","cat":"dependence","ph":"f","bp":"e","id":"d{id}","ts":{ts:.3},"pid":{pid},"tid":{w}}},"#
                        );
                    }
                }
                EventKind::Misses { attempts } => instant(
                    out,
                    "steal misses",
                    "steal",
                    &format!(r#""attempts":{attempts}"#),
                ),
                EventKind::Export { tasks } => instant(
                    out,
                    "sent to another process",
                    "phase",
                    &format!(r#""tasks":{tasks}"#),
                ),
                EventKind::Moved { victim, tasks } => instant(
                    out,
                    "moved from another worker",
                    "phase",
                    &format!(r#""victim":{victim},"tasks":{tasks}"#),
                ),
                EventKind::Import { tasks } => instant(
                    out,
                    "received from another process",
                    "phase",
                    &format!(r#""tasks":{tasks}"#),
                ),
                EventKind::Spawn { parent, child } => instant(
                    out,
                    "spawn",
                    "dataflow",
                    &format!(r#""parent":{parent},"child":{child}"#),
                ),
                EventKind::Wait { task } => instant(
                    out,
                    "wait for children",
                    "dataflow",
                    &format!(r#""task":{task}"#),
                ),
                EventKind::Sync { task } => {
                    instant(out, "sync", "dataflow", &format!(r#""task":{task}"#))
                }
                EventKind::Dep { from, to } => instant(
                    out,
                    "dep",
                    "dataflow",
                    &format!(r#""from":{from},"to":{to}"#),
                ),
                EventKind::Ready { task, by } => {
                    instant(
                        out,
                        "ready",
                        "dataflow",
                        &format!(r#""task":{task},"by":{by}"#),
                    );
                    if started.contains(&task) && released.insert(task) {
                        let _ = writeln!(
                            out,
                            r#"{{"name":"release","cat":"dependence","ph":"s","id":"d{task}","ts":{ts:.3},"pid":{pid},"tid":{w}}},"#
                        );
                    }
                }
            }
        }
        if self.dropped > 0 {
            let ts = self.events.last().map_or(0.0, |e| us(e.t_ns));
            let _ = writeln!(
                out,
                r#"{{"name":"trace incomplete: {} events dropped (buffer of {} events per worker)","ph":"i","s":"p","ts":{ts:.3},"pid":{pid},"tid":0}},"#,
                self.dropped, self.capacity
            );
        }
    }

    /// The whole trace as a Chrome trace-event JSON document.
    ///
    /// ```
    /// let rt = taskpools::Runtime::builder().threads(2).trace(1 << 10).build()?;
    /// rt.join(|| (), || ());
    /// let json = rt.take_trace()?.unwrap().chrome_json("a join");
    /// assert!(json.starts_with("{\"displayTimeUnit\":\"ns\",\"traceEvents\":["));
    /// // std::fs::write("join.json", json) and open it in Perfetto or chrome://tracing.
    /// # Ok::<(), taskpools::Error>(())
    /// ```
    pub fn chrome_json(&self, name: &str) -> String {
        let mut body = String::new();
        self.chrome_events(1, name, &mut body);
        wrap_chrome_events(&body)
    }
}

/// Wraps events written by [`Trace::chrome_events`] (several traces may share one file, one
/// `pid` each) into a Chrome trace-event JSON document.
///
/// ```
/// use taskpools::runtime::trace::wrap_chrome_events;
///
/// let json = wrap_chrome_events("{\"name\":\"x\",\"ph\":\"i\",\"ts\":0,\"pid\":1,\"tid\":0},\n");
/// assert!(json.starts_with("{\"displayTimeUnit\":\"ns\",\"traceEvents\":["));
/// assert!(json.trim_end().ends_with("}\n]}")); // the last comma is gone
/// ```
pub fn wrap_chrome_events(events: &str) -> String {
    let body = events.trim_end().trim_end_matches(',');
    format!("{{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n{body}\n]}}\n")
}

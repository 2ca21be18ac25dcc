//! The agents' message protocol: the tags, the control messages ([`Ctrl`]: steal requests and
//! their answers, the termination token, `Terminate`, `Abort`) and task replies serialized with
//! `postcard`; how an agent receives and handles each message, sends the steal replies its
//! workers prepared, and keeps every non-blocking send's buffer until the send completes.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::request::{Request, StaticScope};
use mpi::topology::Communicator;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::agent::{Agent, End};
use super::report::nanos;
use super::termination::Token;

const TAG_CTRL: i32 = 1;
/// Longest panic message carried to the other ranks, in bytes.
pub(super) const MAX_ABORT_TEXT: usize = 512;
const TAG_TASKS: i32 = 2;

/// Control messages (everything but tasks).
#[derive(Serialize, Deserialize, Debug)]
pub(super) enum Ctrl {
    /// "Send me work." `round`: the requester's search round.
    Request {
        round: u64,
    },
    /// "I have none to spare." `round`: the victim's round if it is searching too.
    NoWork {
        round: Option<u64>,
    },
    Token(Token),
    Terminate,
    Abort {
        rank: u32,
        message: String,
    },
}

/// A send in flight and the leaked buffer it reads (reclaimed once the send completed).
pub(super) type PendingSend = (Request<'static, [u8], StaticScope>, *mut [u8]);

impl<'a, T: Serialize + DeserializeOwned + Send> Agent<'a, T> {
    pub(super) fn receive_all(&mut self) {
        while let Some(probed) = self.comm.any_process().immediate_matched_probe() {
            let (bytes, status) = probed.matched_receive_vec::<u8>();
            self.stats.bytes_received += bytes.len() as u64;
            if !self.cfg.jitter.is_zero() {
                let j = self.rng.u64(0..=nanos(self.cfg.jitter));
                std::thread::sleep(Duration::from_nanos(j));
            }
            let from = status.source_rank() as usize;
            match status.tag() {
                TAG_TASKS => self.on_tasks(from, &bytes),
                TAG_CTRL => match postcard::from_bytes::<Ctrl>(&bytes) {
                    Ok(c) => self.on_ctrl(from, c),
                    Err(e) => panic!(
                        "rank {}: a garbled control message from rank {from}: {e}",
                        self.rank
                    ),
                },
                t => panic!(
                    "rank {}: a message with unknown tag {t} from rank {from}",
                    self.rank
                ),
            }
        }
    }

    fn on_tasks(&mut self, from: usize, bytes: &[u8]) {
        self.safra.received_basic();
        assert_eq!(self.outstanding, Some(from), "tasks come only as an answer");
        self.outstanding = None;
        let tasks: Vec<T> = match postcard::from_bytes(bytes) {
            Ok(t) => t,
            Err(e) => {
                // The tasks are lost: end the phase everywhere, naming the failure.
                if self.end.is_none() {
                    self.abort_all(format!(
                        "rank {}: tasks from rank {from} do not deserialize: {e}",
                        self.rank
                    ));
                }
                return;
            }
        };
        self.stats.tasks_received += tasks.len() as u64;
        if let Some(v) = self.victims.as_mut() {
            v.found(from);
        }
        self.backoff = Duration::ZERO;
        if self.end.is_some() {
            return; // the phase was aborted: these tasks will not run
        }
        self.link.inbox.deliver(tasks, self.coord);
    }

    fn on_ctrl(&mut self, from: usize, c: Ctrl) {
        match c {
            Ctrl::Request { .. } => {
                self.stats.requests_received += 1;
                if self.end.is_some() || self.passive() {
                    let round = self.searching_round();
                    self.send_ctrl(from, &Ctrl::NoWork { round });
                } else if self
                    .link
                    .request
                    .compare_exchange(0, from + 1, Ordering::AcqRel, Ordering::Relaxed)
                    .is_err()
                {
                    self.waiting.push_back(from);
                }
            }
            Ctrl::NoWork { round } => {
                assert_eq!(self.outstanding, Some(from), "an answer to our request");
                self.outstanding = None;
                if let Some(v) = self.victims.as_mut() {
                    if v.failed(round) {
                        self.backoff = (self.backoff * 2)
                            .clamp(Duration::from_micros(20), Duration::from_millis(2));
                        self.quiet_until = Instant::now() + self.backoff;
                    }
                }
            }
            Ctrl::Token(t) => self.safra.receive_token(t),
            Ctrl::Terminate => {
                assert!(self.passive(), "termination while this rank has work");
                self.finish(End::Terminated);
            }
            Ctrl::Abort { rank, message } => {
                if self.end.is_none() {
                    self.finish(End::Aborted {
                        rank: rank as usize,
                        message,
                    });
                }
            }
        }
    }

    /// Sends the steal replies the workers prepared.
    pub(super) fn flush_outbox(&mut self) {
        if self.link.outbox_len.load(Ordering::SeqCst) == 0 {
            return;
        }
        let replies = {
            let mut out = self.link.outbox.lock().unwrap_or_else(|e| e.into_inner());
            let v = std::mem::take(&mut *out);
            self.link.outbox_len.store(0, Ordering::SeqCst);
            v
        };
        for (to, tasks) in replies {
            if tasks.is_empty() {
                let round = self.searching_round();
                self.send_ctrl(to, &Ctrl::NoWork { round });
            } else {
                self.delay(self.cfg.remote_delay);
                let bytes = match postcard::to_allocvec(&tasks) {
                    Ok(b) => b,
                    Err(e) => {
                        // The requester still gets its one answer; the phase ends everywhere.
                        let round = self.searching_round();
                        self.send_ctrl(to, &Ctrl::NoWork { round });
                        if self.end.is_none() {
                            self.abort_all(format!(
                                "rank {}: tasks do not serialize: {e}",
                                self.rank
                            ));
                        }
                        continue;
                    }
                };
                self.stats.tasks_sent += tasks.len() as u64;
                self.stats.requests_granted += 1;
                self.safra.sent_basic();
                self.send(to, TAG_TASKS, bytes);
            }
        }
    }

    pub(super) fn send_ctrl(&mut self, to: usize, c: &Ctrl) {
        let bytes = postcard::to_allocvec(c).expect("control messages serialize");
        self.send(to, TAG_CTRL, bytes);
    }

    fn send(&mut self, to: usize, tag: i32, bytes: Vec<u8>) {
        self.stats.messages_sent += 1;
        self.stats.bytes_sent += bytes.len() as u64;
        let buf: &'static mut [u8] = Box::leak(bytes.into_boxed_slice());
        let raw: *mut [u8] = buf;
        // SAFETY: `raw` points to the leaked allocation, which nothing frees before the send
        // completes (`reap_sends`/`wait_sends` free it only after the request finished), so
        // the shared reference handed to MPI stays valid for as long as MPI reads it.
        let shared: &'static [u8] = unsafe { &*raw };
        let req = self
            .comm
            .process_at_rank(to as i32)
            .immediate_send_with_tag(StaticScope, shared, tag);
        self.sends.push((req, raw));
    }

    pub(super) fn reap_sends(&mut self) {
        let mut i = 0;
        while i < self.sends.len() {
            let (req, raw) = self.sends.swap_remove(i);
            match req.test() {
                Ok(_) => {
                    // SAFETY: `raw` came from `Box::leak` in `send`; the request that read
                    // it has completed and was consumed, so no reference to it remains.
                    drop(unsafe { Box::from_raw(raw) });
                }
                Err(req) => {
                    let last = self.sends.len();
                    self.sends.push((req, raw));
                    self.sends.swap(i, last);
                    i += 1;
                }
            }
        }
    }

    /// Waits for the last sends after the closing barrier. They all complete: a task
    /// message answers a request whose sender waited for it before entering the barrier, and
    /// every control message (tokens, answers, `Terminate`, `Abort` with its text cut to
    /// `MAX_ABORT_TEXT`) is far below MPI's eager limit, so it completes without a receiver.
    pub(super) fn wait_sends(&mut self) {
        for (req, raw) in self.sends.drain(..) {
            req.wait();
            // SAFETY: as in `reap_sends`: the send completed, the request is consumed.
            drop(unsafe { Box::from_raw(raw) });
        }
    }
}

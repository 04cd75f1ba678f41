//! The incremental check that runs inside an execution and the part of it
//! that is hashed with the state (ARCHITECTURE.md, "Linearizability").

use super::check::check;
use super::history::{Entry, History, HistoryError};
use super::spec::SequentialSpec;
use super::text::explain;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeSet;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// A spec state with the open operations that already took effect in it
/// (by process, sorted) and what they returned.
type Config<S> = (<S as SequentialSpec>::State, Vec<(u32, <S as SequentialSpec>::Ret)>);

/// Why recording an event failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TrackError {
    /// The event makes the history ill formed (a model bug).
    Malformed(HistoryError),
    /// The history is no longer linearizable; the text explains it with a
    /// timeline.
    NotLinearizable(String),
}

impl fmt::Display for TrackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrackError::Malformed(e) => write!(f, "ill-formed history: {e}"),
            TrackError::NotLinearizable(text) => f.write_str(text),
        }
    }
}

impl std::error::Error for TrackError {}

/// The history of one execution and its linearizability, checked event by
/// event. Keep it in a model's monitor state.
///
/// **What is hashed** (and compared): the open operations and the set of
/// *configurations* (spec state, open operations already linearized with
/// their return values) that linearizations of the history so far can
/// reach. Whether an extension of the history is linearizable depends on
/// the history only through these two (every completed operation is in
/// every configuration's past), so two executions that reach the same
/// program state and the same tracker have the same violating futures:
/// the state caches of SES, DFS and PB stay sound. The history itself is
/// kept for the message only, outside the hash (copies of a state share
/// its events, and each records its own as one node).
///
/// **The check**: an invocation adds an open operation. A response closes
/// the configurations under linearizing open operations, keeps those where
/// the responding operation took effect with the value it returned, and
/// forgets it; none left means no linearization exists: the error then
/// runs [`check`] (Wing and Gong's search) on the whole history for the
/// culprit and the timeline. A pending operation never fails the check,
/// so an execution that ends (or is cut by the step limit) with a
/// non-empty set of configurations has a linearizable history.
///
/// **Its cost is bounded**: operations that stay pending forever (a
/// request given up after its retries) can take effect in any order at
/// any later point, so the configurations can grow exponentially with
/// them. A response's closure stops at [`MAX_CONFIGS`] configurations;
/// past it the tracker *overflows*: it stops checking this execution
/// (never a false violation; [`Tracker::overflowed`] says so), so one
/// event costs at most `MAX_CONFIGS` times the open operations.
pub struct Tracker<S: SequentialSpec> {
    open: Vec<(u32, S::Op)>,
    configs: Vec<Config<S>>,
    /// The last event recorded (`None`: none yet), and how many there are.
    last: Option<Arc<Node<S>>>,
    len: usize,
    overflowed: bool,
}

/// A recorded event and the ones before it. The copies of a state share
/// their history's prefix, and each records an event as one node: a
/// history kept whole (a vector behind an `Arc`) was copied by every
/// successor that recorded an event (ARCHITECTURE.md,
/// "Performance design").
struct Node<S: SequentialSpec> {
    entry: Entry<S>,
    prev: Option<Arc<Node<S>>>,
}

impl<S: SequentialSpec> Drop for Node<S> {
    /// Frees the nodes no other history shares one by one: dropped
    /// recursively, a long history would overflow the stack.
    fn drop(&mut self) {
        let mut prev = self.prev.take();
        while let Some(node) = prev {
            prev = match Arc::try_unwrap(node) {
                Ok(mut n) => n.prev.take(),
                Err(_) => None,
            };
        }
    }
}

/// The most configurations a [`Tracker`] keeps before it overflows.
pub const MAX_CONFIGS: usize = 1 << 12;

impl<S: SequentialSpec> Default for Tracker<S> {
    fn default() -> Self {
        Tracker {
            open: Vec::new(),
            configs: vec![(S::default().init(), Vec::new())],
            last: None,
            len: 0,
            overflowed: false,
        }
    }
}

impl<S: SequentialSpec> Clone for Tracker<S> {
    fn clone(&self) -> Self {
        Tracker {
            open: self.open.clone(),
            configs: self.configs.clone(),
            last: self.last.clone(),
            len: self.len,
            overflowed: self.overflowed,
        }
    }
}

impl<S: SequentialSpec> PartialEq for Tracker<S> {
    fn eq(&self, other: &Self) -> bool {
        self.open == other.open && self.configs == other.configs && self.overflowed == other.overflowed
    }
}

impl<S: SequentialSpec> Eq for Tracker<S> {}

impl<S: SequentialSpec> Hash for Tracker<S> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.open.hash(state);
        self.configs.hash(state);
        self.overflowed.hash(state);
    }
}

/// A tracker crosses a process boundary (the distributed SES) as what it
/// holds: the open operations, the configurations, the history (the
/// copy no longer shares its prefix with anything) and the overflow.
impl<S: SequentialSpec> Serialize for Tracker<S>
where
    S::State: Serialize,
    S::Op: Serialize,
    S::Ret: Serialize,
{
    fn serialize<Z: Serializer>(&self, serializer: Z) -> Result<Z::Ok, Z::Error> {
        let mut entries = Vec::with_capacity(self.len);
        let mut node = self.last.as_deref();
        while let Some(n) = node {
            entries.push(&n.entry);
            node = n.prev.as_deref();
        }
        entries.reverse();
        (&self.open, &self.configs, entries, self.overflowed).serialize(serializer)
    }
}

impl<'de, S: SequentialSpec> Deserialize<'de> for Tracker<S>
where
    S::State: Deserialize<'de>,
    S::Op: Deserialize<'de>,
    S::Ret: Deserialize<'de>,
{
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        type Parts<S> = (
            Vec<(u32, <S as SequentialSpec>::Op)>,
            Vec<Config<S>>,
            Vec<Entry<S>>,
            bool,
        );
        let (open, configs, entries, overflowed) = Parts::<S>::deserialize(deserializer)?;
        let mut tracker = Tracker {
            open,
            configs,
            last: None,
            len: 0,
            overflowed,
        };
        entries.into_iter().for_each(|e| tracker.push(e));
        Ok(tracker)
    }
}

impl<S: SequentialSpec> fmt::Debug for Tracker<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tracker")
            .field("open", &self.open)
            .field("configs", &self.configs)
            .field("events", &self.len)
            .finish()
    }
}

impl<S: SequentialSpec> Tracker<S> {
    /// The history recorded so far.
    pub fn history(&self) -> History<S> {
        let mut entries = Vec::with_capacity(self.len);
        let mut node = self.last.as_deref();
        while let Some(n) = node {
            entries.push(&n.entry);
            node = n.prev.as_deref();
        }
        entries.into_iter().rev().cloned().collect()
    }

    /// Appends `entry` to the history.
    fn push(&mut self, entry: Entry<S>) {
        let prev = self.last.take();
        self.last = Some(Arc::new(Node { entry, prev }));
        self.len += 1;
    }

    /// How many configurations the history can be in (0 never: recording
    /// fails first).
    pub fn configurations(&self) -> usize {
        self.configs.len()
    }

    /// Whether the configurations outgrew [`MAX_CONFIGS`]: the rest of
    /// this execution's history is not checked.
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// Stop checking: too many configurations (see [`MAX_CONFIGS`]).
    fn overflow(&mut self) {
        self.overflowed = true;
        self.open.clear();
        self.configs.clear();
        self.last = None;
        self.len = 0;
    }

    /// Record `entry` (an invocation or a response); nothing once
    /// [`Tracker::overflowed`].
    pub fn record(&mut self, entry: &Entry<S>) -> Result<(), TrackError> {
        match entry {
            Entry::Invoke { process, op } => self.invoke(*process, op.clone()),
            Entry::Return { process, ret } => self.respond(*process, ret.clone()),
            Entry::Fail { process } => self.fail(*process),
        }
    }

    /// `process` invokes `op`.
    pub fn invoke(&mut self, process: u32, op: S::Op) -> Result<(), TrackError> {
        if self.overflowed {
            return Ok(());
        }
        let at = self.len;
        let Err(k) = self.open.binary_search_by_key(&process, |(p, _)| *p) else {
            return Err(TrackError::Malformed(HistoryError::Overlapping { process, at }));
        };
        self.push(Entry::Invoke {
            process,
            op: op.clone(),
        });
        self.open.insert(k, (process, op));
        Ok(())
    }

    /// `process`'s open operation returns `ret`.
    pub fn respond(&mut self, process: u32, ret: S::Ret) -> Result<(), TrackError> {
        if self.overflowed {
            return Ok(());
        }
        let at = self.len;
        let Ok(k) = self.open.binary_search_by_key(&process, |(p, _)| *p) else {
            return Err(TrackError::Malformed(HistoryError::Unmatched { process, at }));
        };
        self.push(Entry::Return {
            process,
            ret: ret.clone(),
        });
        let spec = S::default();
        if let ([(_, op)], [(state, done)]) = (&self.open[..], &mut self.configs[..])
            && done.is_empty()
        {
            // The common case, the general closure's result computed
            // directly: the responding operation is the only open one and
            // one configuration is left, where it has not taken effect.
            // The closure adds the configuration where it took effect;
            // that one is kept if its value is the one returned.
            let (next, r) = spec.apply(state, op);
            self.open.clear();
            if r != ret {
                self.configs.clear();
                return Err(TrackError::NotLinearizable(self.explain(&spec)));
            }
            *state = next;
            return Ok(());
        }
        let mut closed: BTreeSet<Config<S>> = self.configs.drain(..).collect();
        let mut work: Vec<Config<S>> = closed.iter().cloned().collect();
        'close: while let Some((state, done)) = work.pop() {
            for (p, op) in &self.open {
                let Err(j) = done.binary_search_by_key(p, |(q, _)| *q) else {
                    continue;
                };
                let (next, r) = spec.apply(&state, op);
                let mut more = done.clone();
                more.insert(j, (*p, r));
                let config = (next, more);
                if !closed.contains(&config) {
                    closed.insert(config.clone());
                    work.push(config);
                }
                if closed.len() > MAX_CONFIGS {
                    break 'close;
                }
            }
        }
        if closed.len() > MAX_CONFIGS {
            self.overflow();
            return Ok(());
        }
        let mut kept = BTreeSet::new();
        for (state, mut done) in closed {
            if let Ok(j) = done.binary_search_by_key(&process, |(q, _)| *q)
                && done[j].1 == ret
            {
                done.remove(j);
                kept.insert((state, done));
            }
        }
        self.open.remove(k);
        self.configs = kept.into_iter().collect();
        if self.configs.is_empty() {
            return Err(TrackError::NotLinearizable(self.explain(&spec)));
        }
        Ok(())
    }

    /// `process`'s open operation had no effect: only the configurations
    /// where it did not take effect remain.
    pub fn fail(&mut self, process: u32) -> Result<(), TrackError> {
        if self.overflowed {
            return Ok(());
        }
        let at = self.len;
        let Ok(k) = self.open.binary_search_by_key(&process, |(p, _)| *p) else {
            return Err(TrackError::Malformed(HistoryError::Unmatched { process, at }));
        };
        self.push(Entry::Fail { process });
        self.open.remove(k);
        self.configs
            .retain(|(_, done)| done.binary_search_by_key(&process, |(q, _)| *q).is_err());
        if self.configs.is_empty() {
            return Err(TrackError::NotLinearizable(self.explain(&S::default())));
        }
        Ok(())
    }

    fn explain(&self, spec: &S) -> String {
        let history = self.history();
        match check(spec, &history) {
            Ok(Err(failure)) => explain(&history, &failure),
            Ok(Ok(())) => {
                format!("mcheck bug: the incremental check and Wing and Gong's search disagree on {history:?}")
            }
            Err(e) => format!("ill-formed history: {e}"),
        }
    }
}

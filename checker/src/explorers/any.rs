//! Picking an explorer by name: [`AnyExplorer`], the one runtime form of
//! an explorer, and the object-safe mirror of [`Explorer`] that boxes a
//! model's own explorer inside it (private to this module).

use super::{ProbabilisticRoundRobin, RoundRobin, RunToCompletion};
use crate::explorer::Explorer;
use crate::program::{ActorId, ActorInfo, Event};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt::Debug;

/// An explorer offered by name: a built-in one ([`BUILTIN`]) or a
/// model-specific one (for example chain replication's custom one), made
/// with [`ExplorerSpec::new`].
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct ExplorerSpec {
    /// The name `--explorer` takes.
    pub name: &'static str,
    /// What it does.
    pub description: &'static str,
}

impl ExplorerSpec {
    /// The explorer `--explorer name` picks, with what it does.
    pub const fn new(name: &'static str, description: &'static str) -> ExplorerSpec {
        ExplorerSpec { name, description }
    }
}

/// The built-in explorers, in the order `mcheck list` shows them.
pub const BUILTIN: &[ExplorerSpec] = &[
    ExplorerSpec {
        name: "rr",
        description: "round robin: actors in creation order; a delay moves the chosen one to the tail",
    },
    ExplorerSpec {
        name: "rtc",
        description: "run to completion: a message's receiver runs next (follows the causal chain); a delay moves the chosen one to the bottom",
    },
    ExplorerSpec {
        name: "prr",
        description: "probabilistic round robin: round robin with every actor inserted at a random position (seeded)",
    },
];

/// The built-in explorer called `name` (one of [`BUILTIN`]), if there is
/// one.
///
/// ```
/// use mcheck_checker::{builtin, Explorer};
///
/// assert_eq!(builtin("rr").map(|e| e.name().to_string()).as_deref(), Some("rr"));
/// assert!(builtin("fifo").is_none());
/// ```
pub fn builtin(name: &str) -> Option<AnyExplorer> {
    match name {
        "rr" => Some(AnyExplorer::Rr(RoundRobin::new())),
        "rtc" => Some(AnyExplorer::Rtc(RunToCompletion::new())),
        "prr" => Some(AnyExplorer::Prr(ProbabilisticRoundRobin::new(0))),
        _ => None,
    }
}

/// Any explorer chosen at run time: the built-ins without an allocation
/// per clone, and a model's own explorer boxed ([`AnyExplorer::custom`],
/// what [`Model::explorer`](crate::Model::explorer) returns).
#[derive(Clone, Debug)]
pub enum AnyExplorer {
    /// Round robin.
    Rr(RoundRobin),
    /// Run to completion.
    Rtc(RunToCompletion),
    /// Probabilistic round robin.
    Prr(ProbabilisticRoundRobin),
    /// A model's own explorer, boxed: made by [`AnyExplorer::custom`].
    Custom(CustomExplorer),
}

impl AnyExplorer {
    /// `explorer` (a model's own) as a runtime explorer: boxed, so one
    /// allocation per clone, and called through a virtual table. The
    /// built-ins have variants of their own and need neither.
    ///
    /// ```
    /// use mcheck_checker::explorers::RoundRobin;
    /// use mcheck_checker::{AnyExplorer, Explorer};
    ///
    /// // Any `Explorer` of yours; a built-in one here, to keep it short.
    /// let mine = AnyExplorer::custom(RoundRobin::new());
    /// assert_eq!(mine.name(), "rr");
    /// ```
    pub fn custom<E: Explorer + 'static>(explorer: E) -> Self {
        AnyExplorer::Custom(CustomExplorer(Box::new(explorer)))
    }
}

impl From<RoundRobin> for AnyExplorer {
    fn from(e: RoundRobin) -> Self {
        AnyExplorer::Rr(e)
    }
}

impl From<RunToCompletion> for AnyExplorer {
    fn from(e: RunToCompletion) -> Self {
        AnyExplorer::Rtc(e)
    }
}

impl From<ProbabilisticRoundRobin> for AnyExplorer {
    fn from(e: ProbabilisticRoundRobin) -> Self {
        AnyExplorer::Prr(e)
    }
}

/// A built-in explorer as it crosses a process boundary (the distributed
/// SES sends a state's explorer with it).
#[derive(Serialize)]
enum Sent<'a> {
    Rr(&'a RoundRobin),
    Rtc(&'a RunToCompletion),
    Prr(&'a ProbabilisticRoundRobin),
}

/// [`Sent`], received.
#[derive(Deserialize)]
enum Received {
    Rr(RoundRobin),
    Rtc(RunToCompletion),
    Prr(ProbabilisticRoundRobin),
}

/// The built-ins are encoded; a model's own explorer is not (its type is
/// behind the box), and encoding it is an error that names it.
impl Serialize for AnyExplorer {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            AnyExplorer::Rr(e) => Sent::Rr(e).serialize(serializer),
            AnyExplorer::Rtc(e) => Sent::Rtc(e).serialize(serializer),
            AnyExplorer::Prr(e) => Sent::Prr(e).serialize(serializer),
            AnyExplorer::Custom(e) => Err(serde::ser::Error::custom(format!(
                "the explorer {} is a model's own and cannot be encoded (only {} can)",
                e.name(),
                BUILTIN.iter().map(|b| b.name).collect::<Vec<_>>().join(", ")
            ))),
        }
    }
}

impl<'de> Deserialize<'de> for AnyExplorer {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match Received::deserialize(deserializer)? {
            Received::Rr(e) => AnyExplorer::Rr(e),
            Received::Rtc(e) => AnyExplorer::Rtc(e),
            Received::Prr(e) => AnyExplorer::Prr(e),
        })
    }
}

macro_rules! each {
    ($self:expr, $e:ident => $body:expr) => {
        match $self {
            AnyExplorer::Rr($e) => $body,
            AnyExplorer::Rtc($e) => $body,
            AnyExplorer::Prr($e) => $body,
            AnyExplorer::Custom($e) => $body,
        }
    };
}

impl Explorer for AnyExplorer {
    fn name(&self) -> &str {
        each!(self, e => e.name())
    }
    fn seed(&mut self, seed: u64) {
        each!(self, e => e.seed(seed))
    }
    fn is_randomized(&self) -> bool {
        each!(self, e => e.is_randomized())
    }
    #[inline]
    fn is_trusted(&self) -> bool {
        each!(self, e => e.is_trusted())
    }
    fn init(&mut self, actors: &[ActorInfo]) {
        each!(self, e => e.init(actors))
    }
    #[inline]
    fn next(&self, enabled: &[ActorId]) -> ActorId {
        each!(self, e => e.next(enabled))
    }
    #[inline]
    fn step(&mut self, events: &[Event]) {
        each!(self, e => e.step(events))
    }
    fn delay(&mut self, enabled: &[ActorId]) {
        each!(self, e => e.delay(enabled))
    }
    #[inline]
    fn next_masked(&self, enabled: &[ActorId], mask: Option<u64>) -> ActorId {
        each!(self, e => e.next_masked(enabled, mask))
    }
    #[inline]
    fn delay_masked(&mut self, enabled: &[ActorId], mask: Option<u64>) {
        each!(self, e => e.delay_masked(enabled, mask))
    }
    fn state_hash(&self) -> Option<u64> {
        each!(self, e => e.state_hash())
    }
}

/// The boxed explorer inside [`AnyExplorer::Custom`]. It has no name
/// outside this module: only [`AnyExplorer::custom`] makes one, and it is
/// used as an [`Explorer`].
#[derive(Debug)]
pub struct CustomExplorer(Box<dyn DynExplorer>);

impl Clone for CustomExplorer {
    fn clone(&self) -> Self {
        CustomExplorer(self.0.clone_box())
    }
}

impl Explorer for CustomExplorer {
    fn name(&self) -> &str {
        self.0.dyn_name()
    }
    fn seed(&mut self, seed: u64) {
        self.0.dyn_seed(seed)
    }
    fn is_randomized(&self) -> bool {
        self.0.dyn_is_randomized()
    }
    fn is_trusted(&self) -> bool {
        self.0.dyn_is_trusted()
    }
    fn init(&mut self, actors: &[ActorInfo]) {
        self.0.dyn_init(actors)
    }
    fn next(&self, enabled: &[ActorId]) -> ActorId {
        self.0.dyn_next(enabled)
    }
    fn step(&mut self, events: &[Event]) {
        self.0.dyn_step(events)
    }
    fn delay(&mut self, enabled: &[ActorId]) {
        self.0.dyn_delay(enabled)
    }
    fn next_masked(&self, enabled: &[ActorId], mask: Option<u64>) -> ActorId {
        self.0.dyn_next_masked(enabled, mask)
    }
    fn delay_masked(&mut self, enabled: &[ActorId], mask: Option<u64>) {
        self.0.dyn_delay_masked(enabled, mask)
    }
    fn state_hash(&self) -> Option<u64> {
        self.0.dyn_state_hash()
    }
}

/// An object-safe mirror of [`Explorer`] (which is not object-safe: it is
/// `Clone`), so that [`CustomExplorer`] can box any
/// explorer. Each method is the [`Explorer`] method of the same name.
trait DynExplorer: Send + Sync + Debug {
    fn clone_box(&self) -> Box<dyn DynExplorer>;
    fn dyn_name(&self) -> &str;
    fn dyn_seed(&mut self, seed: u64);
    fn dyn_is_randomized(&self) -> bool;
    fn dyn_is_trusted(&self) -> bool;
    fn dyn_init(&mut self, actors: &[ActorInfo]);
    fn dyn_next(&self, enabled: &[ActorId]) -> ActorId;
    fn dyn_step(&mut self, events: &[Event]);
    fn dyn_delay(&mut self, enabled: &[ActorId]);
    fn dyn_next_masked(&self, enabled: &[ActorId], mask: Option<u64>) -> ActorId;
    fn dyn_delay_masked(&mut self, enabled: &[ActorId], mask: Option<u64>);
    fn dyn_state_hash(&self) -> Option<u64>;
}

impl<E: Explorer + 'static> DynExplorer for E {
    fn clone_box(&self) -> Box<dyn DynExplorer> {
        Box::new(self.clone())
    }
    fn dyn_name(&self) -> &str {
        self.name()
    }
    fn dyn_seed(&mut self, seed: u64) {
        self.seed(seed)
    }
    fn dyn_is_randomized(&self) -> bool {
        self.is_randomized()
    }
    fn dyn_is_trusted(&self) -> bool {
        self.is_trusted()
    }
    fn dyn_init(&mut self, actors: &[ActorInfo]) {
        self.init(actors)
    }
    fn dyn_next(&self, enabled: &[ActorId]) -> ActorId {
        self.next(enabled)
    }
    fn dyn_step(&mut self, events: &[Event]) {
        self.step(events)
    }
    fn dyn_delay(&mut self, enabled: &[ActorId]) {
        self.delay(enabled)
    }
    fn dyn_next_masked(&self, enabled: &[ActorId], mask: Option<u64>) -> ActorId {
        self.next_masked(enabled, mask)
    }
    fn dyn_delay_masked(&mut self, enabled: &[ActorId], mask: Option<u64>) {
        self.delay_masked(enabled, mask)
    }
    fn dyn_state_hash(&self) -> Option<u64> {
        self.state_hash()
    }
}

//! `paxos`: single-decree Paxos with acceptors and competing proposers that
//! time out and retry.
//!
//! Each of `proposers` proposers wants its own value (`v0`, `v1`, ...)
//! chosen. A ballot is `(round, proposer)`, ordered lexicographically, so two
//! proposers never share one. Phase 1: the proposer sends `Prepare(b)` to a
//! majority quorum of acceptors ([`Cfg::quorum`]: proposers start at
//! different, overlapping quorums and every retry moves to the next one); an
//! acceptor that has promised nothing higher promises `b` and answers
//! `Promise(b, last)` with the proposal it last accepted, or `Nack(b)`
//! otherwise. With promises from a majority (`acceptors / 2 + 1`) the
//! proposer enters phase 2 with the value of the highest-numbered accepted
//! proposal among the promises (its own value if none) and sends
//! `Accept(b, v)` to the acceptors that promised; an acceptor that has
//! promised nothing higher than `b` accepts and answers `Accepted(b)`, or
//! `Nack(b)`. The proposer acts as the learner: once a majority accepted its
//! ballot it announces its value decided (and halts, after its last
//! proposal).
//!
//! Quorums rather than broadcasts: queues are FIFO per receiver, so acceptors
//! that all received every request would all see them in the same order and
//! stay identical; a proposal could then never be accepted by a minority,
//! which is the situation Paxos's value-adoption rule exists for.
//!
//! A proposer gives up on its round when it is refused (`Nack`) or when its
//! timer fires. The timer is a self-message: starting a round with retries
//! left, the proposer sends itself `Timeout(round)` after the prepare
//! requests; when it handles the timeout of its current round while still in
//! phase 1, it chooses nondeterministically whether to give up and start the
//! next round (the old requests and their replies stay in flight). Each
//! proposer starts over at most `retries` times, then stops when refused
//! again, so every run terminates.
//!
//! A long workload: each proposer makes `proposals` proposals one after
//! the other (1 by default). When a proposal is decided or stopped, the
//! next starts in the proposer's next round with fresh retries, so it must
//! learn and re-propose a value chosen meanwhile; the proposer halts after
//! its last. Exhaustive search is meant for `proposals=1`; more is for the
//! sampling strategies, where the races above happen late in a long run.
//!
//! Acceptors announce every acceptance, so the monitor knows when a value is
//! chosen (accepted by a majority in one ballot) the moment it is, whether or
//! not a proposer learns it. It checks the two safety properties of Paxos:
//! at most one value is chosen (`agreement`, also checked against every
//! decision announced), and every proposal with a ballot above that of a
//! chosen value carries the chosen value (`p2b`).
//!
//! Seeded bugs (each needs a message to overtake another, so the zero-delay
//! run-to-completion execution does not find it):
//! 1. `stale-promise` ([`Bug::StalePromise`]): the proposer counts promises without checking their
//!    ballot, so after it restarts phase 1, late promises of its earlier
//!    round (which predate values accepted since) complete its new majority.
//! 2. `accept-below-promise` ([`Bug::AcceptBelowPromise`]): the acceptor compares an `Accept` with the
//!    ballot it last accepted instead of the ballot it promised.
//! 3. `first-value` ([`Bug::FirstValue`]): the proposer adopts the value of the first promise that
//!    reports an accepted proposal instead of the highest-numbered one.
//! 4. `silent-refusal` ([`Bug::SilentRefusal`], a liveness bug): the
//!    acceptor drops an `Accept` below its promise without a `Nack`, so the
//!    proposer waits forever in phase 2.
//!
//! Liveness (the `progress` monitor, ARCHITECTURE.md, "Liveness"): a proposer that
//! has neither decided nor given up (every proposal, not halted) is owed an
//! answer: each of its rounds ends by a decision, a `Nack` or its timer,
//! and its retries are bounded, so every execution of the correct protocol
//! ends with every proposer finished, and a proposer left alone (the
//! others finished) runs its round to a decision unless a higher promise
//! refuses it. With retries bounded, "a value is eventually chosen" does
//! not hold as such (two proposers may pre-empt each other until both run
//! out of retries), so what is checked is the answer every proposer is
//! owed; bug 4 shows the lost answer.
//!
//! Not symmetric (no group declared for `--symmetry`):
//! * the acceptors: [`Cfg::quorum`] sends ballot `(round, pid)` to a fixed
//!   window of acceptor ids (proposer 0 starts at {0, 1}, proposer 1 at
//!   {1, 2}, each retry shifts the window), so after a permutation of the
//!   acceptors the same proposer's next `Prepare` goes to acceptors that
//!   are not the images of the original ones: transitions do not commute
//!   with any non-trivial permutation (no permutation of 3 acceptors keeps
//!   the quorums {0,1}, {1,2}, {0,2} of the default configuration);
//! * the proposers: a ballot's order breaks ties by the proposer's index
//!   (`b1.0 < b1.1`) and proposer `i` proposes value `i`, so swapping two
//!   proposers changes which one's Prepare an acceptor refuses;
//! * there are no separate learners (each proposer learns its own ballot).

use crate::noise;
use mcheck_checker::machine::{Ctx, MachineId, MachineModel, Machines, MonitorError, Setup, World};
use mcheck_checker::model::SeededBug;
use mcheck_checker::{BugSpec, Model, ModelInfo, ParamSpec, Params};
use serde::{Deserialize, Serialize};
use std::fmt;

mod monitor;
mod roles;

pub use monitor::Monitor;

/// The model (see the module docs).
#[derive(Clone, Copy, Debug, Default)]
pub struct Paxos;

/// The seeded bugs (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Bug {
    /// The proposer counts a promise of an earlier ballot.
    StalePromise,
    /// The acceptor checks an Accept against its last accepted ballot
    /// (as Cassandra's lightweight transactions did before CASSANDRA-6023,
    /// "CAS should distinguish promised and accepted ballots"; a row of
    /// the noise benchmark, `crate::noise::ROWS`).
    AcceptBelowPromise,
    /// The proposer adopts the first reported value, not the highest-numbered.
    FirstValue,
    /// Liveness: the acceptor drops an Accept below its promise without a
    /// Nack, so the proposer waits for an answer that never comes.
    SilentRefusal,
}

impl SeededBug for Bug {
    const TABLE: &'static [(Bug, BugSpec)] = &[
        (
            Bug::StalePromise,
            BugSpec::new(
                1,
                "stale-promise",
                "the proposer counts a Promise without checking that its ballot is the current one: proposer 0 times out in round 1 and sends Prepare(b2.0) to its next quorum, while Promise(b1.0) replies are still in flight; proposer 1 meanwhile gets v1 chosen in b1.1; the stale promises (which predate that acceptance) and one fresh promise make a majority that reports nothing accepted, so proposer 0 proposes its own v0 in b2.0 above the chosen b1.1",
            ),
        ),
        (
            Bug::AcceptBelowPromise,
            BugSpec::new(
                2,
                "accept-below-promise",
                "the acceptor checks an Accept against the ballot it last accepted instead of the ballot it promised: when proposer 0's Accept(b1.0, v0) is overtaken at the acceptor shared by both quorums by proposer 1's higher Prepare(b1.1), the acceptor promises b1.1 (reporting nothing accepted) and then still accepts v0, so v0 is chosen in b1.0 while proposer 1, whose promises reported nothing, proposes v1 in the higher b1.1",
            ),
        ),
        (
            Bug::FirstValue,
            BugSpec::new(
                3,
                "first-value",
                "the proposer adopts the value of the first Promise that reports an accepted proposal instead of the highest-numbered one: proposer 0's Accept(b1.0, v0) reaches one acceptor of its quorum while the other has already promised proposer 1's higher b1.1 and refuses; proposer 0 retries in round 2 with a quorum holding that minority acceptance (b1.0, v0) and an acceptance of (b1.1, v1), hears from the old one first and re-proposes v0 in b2.0, so v0 is chosen in b2.0 while v1 is (or becomes) chosen in b1.1",
            ),
        ),
        (
            Bug::SilentRefusal,
            BugSpec::new(
                4,
                "silent-refusal",
                "liveness: the acceptor drops an Accept below its promise instead of answering Nack (a refusal that is never sent): when proposer 1's Prepare(b1.1) overtakes proposer 0's Accept(b1.0, v0) at the acceptor both quorums share, proposer 0 waits in phase 2 for an Accepted or a Nack that never comes, and never decides nor gives up; the execution ends with the progress monitor hot",
            ),
        ),
    ];
}

/// The parameters and their defaults (the only place they are written).
pub const PARAMS: [ParamSpec; 5] = [
    ParamSpec::new(
        "acceptors",
        3,
        1..=5,
        "number of acceptors (a majority is acceptors/2+1)",
    ),
    ParamSpec::new(
        "proposers",
        2,
        1..=3,
        "number of proposers, each proposing its own value",
    ),
    ParamSpec::new(
        "retries",
        1,
        0..=3,
        "times each proposer may give up (nack or timeout) and start a higher round, per proposal",
    ),
    ParamSpec::new(
        "proposals",
        1,
        1..=60,
        "proposals each proposer makes one after the other, each in a higher round",
    )
    .exhaustive_max(1),
    crate::noise::PARAM,
];

/// One configuration of the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cfg {
    /// Number of acceptors.
    pub acceptors: u8,
    /// Number of proposers (proposer `i` proposes value `i`).
    pub proposers: u8,
    /// How many times each proposer may give up and start a new round,
    /// per proposal.
    pub retries: u8,
    /// Proposals each proposer makes, one after the other.
    pub proposals: u8,
    /// Background client/store pairs ([`crate::noise`]).
    pub noise: u8,
    /// The seeded bug switched on, if any.
    pub bug: Option<Bug>,
}

impl Default for Cfg {
    fn default() -> Self {
        Cfg::new(&Params::defaults(&PARAMS), None)
    }
}

impl Cfg {
    /// The configuration for `params` (resolved against [`PARAMS`]).
    pub fn new(params: &Params, bug: Option<Bug>) -> Cfg {
        Cfg {
            acceptors: params.get("acceptors") as u8,
            proposers: params.get("proposers") as u8,
            retries: params.get("retries") as u8,
            proposals: params.get("proposals") as u8,
            noise: params.get(noise::NOISE_PARAM) as u8,
            bug,
        }
    }

    /// Size of a majority of acceptors.
    pub fn majority(&self) -> u32 {
        u32::from(self.acceptors) / 2 + 1
    }

    /// The acceptors (a bit mask) that ballot `b` is sent to: a majority
    /// starting at acceptor `pid`, shifted down by one for every later
    /// round (so proposers start with different, overlapping quorums and a
    /// retry goes to a new one).
    pub fn quorum(&self, b: Ballot) -> u8 {
        let n = u32::from(self.acceptors);
        let shift = (u32::from(b.round) + n - 1) % n;
        let start = (u32::from(b.pid) % n + n - shift) % n;
        (0..self.majority()).fold(0, |mask, k| mask | 1 << ((start + k) % n))
    }

    fn proposer(&self, pid: u8) -> MachineId {
        MachineId(u32::from(self.acceptors) + u32::from(pid))
    }

    /// Send `msg` to every acceptor of `quorum` (a bit mask), lowest first.
    fn to_quorum(&self, quorum: u8, msg: Msg, ctx: &mut Ctx<Self>) {
        for a in (0..self.acceptors).filter(|a| quorum & (1 << a) != 0) {
            ctx.send(MachineId(u32::from(a)), msg.clone());
        }
    }
}

/// A ballot: a round and the proposer that owns it, ordered by round first.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Ballot {
    /// The round (from 1).
    pub round: u8,
    /// The proposer's index.
    pub pid: u8,
}

impl fmt::Debug for Ballot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "b{}.{}", self.round, self.pid)
    }
}

/// A proposed value (proposer `i` proposes value `i`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Value(pub u8);

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.0)
    }
}

/// Where a proposer is in its current round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Phase {
    /// Not started yet.
    Init,
    /// Phase 1: waiting for promises.
    Preparing,
    /// Phase 2: the accept requests are out, waiting for acceptances.
    Accepting,
    /// A majority accepted its proposal.
    Decided,
    /// Gave up with no retries left.
    Stopped,
}

/// An acceptor.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Acceptor {
    /// The highest ballot promised.
    pub promised: Option<Ballot>,
    /// The last proposal accepted.
    pub accepted: Option<(Ballot, Value)>,
}

/// A proposer, which is also the learner of its own ballots.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Proposer {
    /// Its index (and the value it wants).
    pub pid: u8,
    /// The current round.
    pub round: u8,
    /// Where it is in the round.
    pub phase: Phase,
    /// Acceptors (bit mask) that promised (phase 1) or accepted (phase 2)
    /// the current ballot.
    pub acks: u8,
    /// The highest-numbered accepted proposal reported by the promises.
    pub best: Option<(Ballot, Value)>,
    /// Restarts left (for the current proposal).
    pub retries: u8,
    /// Proposals left, the current one included.
    pub proposals: u8,
}

/// The machines.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Machine {
    /// An acceptor.
    Acceptor(Acceptor),
    /// A proposer.
    Proposer(Proposer),
    /// A background actor ([`crate::noise`]).
    Noise(noise::Actor),
}

/// The messages.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Msg {
    /// Proposer: start.
    Go,
    /// Proposer to acceptor: phase 1a.
    Prepare(Ballot),
    /// Acceptor to proposer: phase 1b, with the last accepted proposal.
    Promise {
        /// The ballot promised.
        b: Ballot,
        /// The acceptor's index.
        acc: u8,
        /// The last proposal it accepted.
        last: Option<(Ballot, Value)>,
    },
    /// Acceptor to proposer: refused, it promised a higher ballot.
    Nack(Ballot),
    /// Proposer to acceptor: phase 2a.
    Accept(Ballot, Value),
    /// Acceptor to proposer: phase 2b.
    Accepted {
        /// The ballot accepted.
        b: Ballot,
        /// The acceptor's index.
        acc: u8,
    },
    /// Proposer to itself: its timer for this round fired.
    Timeout(u8),
    /// Background traffic ([`crate::noise`]).
    Noise(noise::Msg),
}

/// What the monitor observes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Note {
    /// A proposer entered phase 2 with this proposal.
    Proposed(Ballot, Value),
    /// Acceptor `acc` accepted this proposal.
    Accepted(Ballot, Value, u8),
    /// A proposer learnt that its proposal was accepted by a majority.
    Decided(Ballot, Value),
}

impl MachineModel for Cfg {
    type Machine = Machine;
    type Msg = Msg;
    type Announce = Note;
    type Monitor = Monitor;

    fn setup(&self, setup: &mut Setup<Self>) {
        for _ in 0..self.acceptors {
            setup.create(Machine::Acceptor(Acceptor {
                promised: None,
                accepted: None,
            }));
        }
        for pid in 0..self.proposers {
            let p = setup.create(Machine::Proposer(Proposer {
                pid,
                round: 0,
                phase: Phase::Init,
                acks: 0,
                best: None,
                retries: self.retries,
                proposals: self.proposals,
            }));
            setup.send(p, Msg::Go);
        }
        noise::setup(setup, self.noise, Machine::Noise, Msg::Noise);
    }

    fn kind(&self, m: &Machine) -> &'static str {
        match m {
            Machine::Acceptor(_) => "acceptor",
            Machine::Proposer(_) => "proposer",
            Machine::Noise(a) => a.kind(),
        }
    }

    fn state_name(&self, m: &Machine) -> Option<String> {
        match m {
            Machine::Proposer(p) => Some(format!("{:?}@{}", p.phase, p.round)),
            Machine::Acceptor(_) | Machine::Noise(_) => None,
        }
    }

    fn handle(&self, m: &mut Machine, msg: &Msg, ctx: &mut Ctx<Self>) {
        match m {
            Machine::Acceptor(a) => a.handle(self, msg, ctx),
            Machine::Proposer(p) => p.handle(self, msg, ctx),
            Machine::Noise(a) => {
                let m = if let Msg::Noise(m) = msg { Some(m) } else { None };
                a.handle(m, ctx, Msg::Noise)
            }
        }
    }

    /// Liveness (`progress`): hot while a proposer has neither decided nor
    /// given up on its proposal. Every round ends, by a decision, a Nack
    /// or the timer, and retries are bounded, so the correct protocol
    /// always finishes: with no competing proposer left, the last one's
    /// proposal is chosen (ARCHITECTURE.md, "Liveness").
    fn has_liveness(&self) -> bool {
        true
    }

    fn hot(&self, world: &World<Self>) -> bool {
        world.live().any(|(_, m)| matches!(m, Machine::Proposer(_)))
    }

    fn owed(&self, world: &World<Self>) -> Option<MonitorError> {
        world.live().find_map(|(id, m)| match m {
            Machine::Proposer(p) => Some(MonitorError::new(
                "progress",
                format!(
                    "proposer{} has neither decided nor given up ({:?} in round {})",
                    id.0, p.phase, p.round
                ),
            )),
            Machine::Acceptor(_) | Machine::Noise(_) => None,
        })
    }

    fn observe(&self, mon: &mut Monitor, note: &Note) -> Result<(), MonitorError> {
        mon.observe(self.majority(), note)
    }

    fn handlers(&self) -> Vec<(&'static str, &'static str)> {
        let mut h = vec![
            ("acceptor", "Accept"),
            ("acceptor", "Prepare"),
            ("proposer", "Accepted"),
            ("proposer", "Go"),
            ("proposer", "Nack"),
            ("proposer", "Promise"),
            ("proposer", "Timeout"),
        ];
        h.extend(noise::handlers(self.noise));
        h
    }

    fn sometimes(&self) -> Vec<&'static str> {
        vec!["value-chosen", "competing-ballots"]
    }

    fn holds(&self, world: &World<Self>, property: usize) -> bool {
        let mon = world.monitor();
        match property {
            0 => mon.chosen().is_some(),
            // Two different ballots were proposed (a retry or a rival).
            1 => mon.competing(),
            _ => false,
        }
    }
}

impl Model for Paxos {
    type Program = Machines<Cfg>;

    fn info(&self) -> ModelInfo {
        ModelInfo::new(
            "paxos",
            "single-decree Paxos: acceptors and competing proposers that time out and retry with higher ballots",
        )
        .params(PARAMS)
        .bugs(Bug::specs())
    }

    fn build(&self, params: &Params, bug: Option<u32>) -> Machines<Cfg> {
        Machines(Cfg::new(params, Bug::from_build(bug)))
    }
}

//! `2pc`: two-phase commit with a coordinator, `participants` participants,
//! a timer and `clients` clients (after the P `TwoPhaseCommit` example).
//!
//! # Machines (ids in creation order)
//!
//! * `coordinator0` serializes transactions: a client's `Write` is deferred
//!   while a transaction is in flight. For each write it opens transaction
//!   `txn + 1`, starts the timer (`Start`), and sends `Prepare` to every
//!   participant. A `no` vote or a `Timeout` for the open transaction
//!   aborts it; the last `yes` vote commits it. The decision cancels the
//!   timer (`Cancel`), answers the client (`Result`) and is sent to every
//!   participant (`Commit` / `Abort`). Votes and timeouts carry the
//!   transaction id; the coordinator ignores those that are not for the
//!   transaction it is collecting votes for.
//! * `timer1`: `Start{txn}` arms it and queues itself a `Tick`; on the tick
//!   it may fire (`Timeout{txn}`, a nondeterministic choice) if it is still
//!   armed for that transaction. `Cancel` disarms it, but a cancel that
//!   arrives after the tick fired fails: the `Timeout` is already on its
//!   way and reaches the coordinator after the decision.
//! * `participant2..`: on `Prepare` a participant votes yes or no
//!   (nondeterministically) and, on yes, holds the write as pending. On
//!   `Commit` it logs the write and applies it to its store asynchronously
//!   (a self-message `Apply`); reads are deferred while a logged commit is
//!   unapplied. `Read{key}` is answered with the stored value.
//! * `client..`: client `c` writes key `c` `transactions` times (2 by
//!   default; up to 60 for a long workload under sampling), values 1, 2,
//!   ...; after each write's `Result` (committed or aborted) it reads the
//!   key back from participant 0 or from the last participant (a choice),
//!   then halts after its last read.
//!
//! Default configuration: 2 participants, 1 client (two clients multiply
//! the state space beyond the one-minute budget of SES with RTC).
//!
//! # Monitors
//!
//! * `atomicity`: no transaction is both committed by a participant and
//!   aborted by another (or voted against by one).
//! * `read-your-writes`: a client that was told its write committed reads
//!   it back; one told it aborted does not read the value it tried to write.
//! * `linearizability`: each client records its writes (`put(key, value)`,
//!   invoked when sent, returning on a committed `Result`, failed (no
//!   effect) on an aborted one) and reads (`get(key)`, value 0 is "none")
//!   in a [`mcheck_checker::lin::Tracker`] over a key-value map; the
//!   history must be linearizable (ARCHITECTURE.md, "Linearizability").
//!
//!
//! # Liveness (ARCHITECTURE.md, "Liveness")
//!
//! Hot while something is owed: `answered`, a client that has not halted
//! is owed the answer to its current request (its write's `Result`, then
//! its read's `Value`; its `Go` counts as the first write); `in-doubt`, a
//! participant that voted yes is owed the decision (`pending` until its
//! `Commit` or `Abort`). The coordinator decides every transaction (the
//! last yes vote, a no vote or the timeout: votes are never lost), tells
//! the client and every participant, so every execution of the correct
//! model ends with every client halted and no participant in doubt.
//!
//! # Symmetry
//!
//! The participants are grouped as [`MachineModel::symmetry`] says (a
//! client reads from the first or the last participant, so those two are
//! interchangeable with each other only). The clients are not declared:
//! client `c` writes key `c`, and the keys index the participants' stores
//! and the linearizability history, which a permutation of the clients
//! would have to permute too.
//!
//! # Seeded bugs
//!
//! See [`Bug`]; each needs at least one delay to be found: in the
//! zero-delay run-to-completion schedule the timer's tick comes after the
//! decision, votes arrive in order and each commit is applied before the
//! client's read.

use crate::noise;
use mcheck_checker::lin::{Entry, KvMap};
use mcheck_checker::machine::{Ctx, MachineId, MachineModel, Machines, MonitorError, Receive, Renamed, Setup, World};
use mcheck_checker::model::SeededBug;
use mcheck_checker::{BugSpec, Model, ModelInfo, ParamSpec, Params};
use serde::{Deserialize, Serialize};

mod monitor;
mod roles;

pub use monitor::Monitor;
pub use roles::{Client, Coordinator, Participant, Phase, Timer};

/// The coordinator's id.
pub const COORDINATOR: MachineId = MachineId(0);
/// The timer's id.
pub const TIMER: MachineId = MachineId(1);
/// The largest number of participants.
pub const MAX_PARTICIPANTS: u8 = 4;
/// The largest number of clients (keys).
pub const MAX_CLIENTS: usize = 3;

/// The seeded bugs (each needs at least one delay, see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Bug {
    /// The coordinator counts a vote after a timeout aborted the
    /// transaction (a row of the noise benchmark, `crate::noise::ROWS`).
    CommitAfterTimeout,
    /// A stale timeout aborts a committed transaction (a row of the noise
    /// benchmark, `crate::noise::ROWS`).
    AbortAfterCommit,
    /// The coordinator counts a vote for an earlier transaction.
    StaleVote,
    /// A participant serves a read before applying a logged commit.
    ReadBeforeApply,
    /// An abort resets the key instead of dropping the prepared write.
    AbortResetsStore,
    /// Liveness: an abort is sent only to the participants whose yes vote
    /// the coordinator counted, so one whose vote was in flight stays in
    /// doubt.
    AbortOnlyCounted,
}

impl SeededBug for Bug {
    const TABLE: &'static [(Bug, BugSpec)] = &[
        (
            Bug::CommitAfterTimeout,
            BugSpec::new(
                1,
                "commit-after-timeout",
                "the coordinator's vote handler checks that a vote is for the current transaction but not that the transaction is still collecting votes: when the timer's Timeout reaches the coordinator between the first and the last yes vote, the coordinator aborts (Abort to every participant, aborted to the client), and the last yes vote, processed afterwards, completes the tally and the coordinator also commits; a participant that applied the Abort then receives Commit for the same transaction",
            ),
        ),
        (
            Bug::AbortAfterCommit,
            BugSpec::new(
                2,
                "abort-after-commit",
                "the coordinator's timeout handler checks the transaction id of the Timeout but not whether the transaction is still undecided: the timer ticks and fires just before the coordinator's Cancel reaches it (the cancel fails), the coordinator has meanwhile committed on the last yes vote, and the stale Timeout, processed before the next transaction starts, makes it send Abort for the committed transaction to participants that already committed it",
            ),
        ),
        (
            Bug::StaleVote,
            BugSpec::new(
                3,
                "stale-vote",
                "the coordinator's vote handler checks that it is collecting votes but not the transaction id of the vote: when one participant votes no the coordinator aborts at once, while the other participant's Prepare is still queued; its yes Vote for the aborted transaction arrives after the client's next Write opened a new transaction, is counted for it, and together with the other yes vote commits a transaction that the first participant votes against",
            ),
        ),
        (
            Bug::ReadBeforeApply,
            BugSpec::new(
                4,
                "read-before-apply",
                "a participant serves a Read while a committed write is logged but not yet applied to its store: the client gets its committed Result and sends its Read before the participant has handled the Commit, so the Read is queued ahead of the participant's own Apply message and returns the old value of the key",
            ),
        ),
        (
            Bug::AbortResetsStore,
            BugSpec::new(
                5,
                "abort-resets-store",
                "a participant that prepared a write undoes it on Abort by resetting the key in its store to 0 (no value) instead of just dropping the prepared write: after the client's first write committed, its second write is aborted (the other participant votes no), and the client reads the key back from this participant and gets nothing, although its first write committed. read-your-writes is satisfied (the value read is not the aborted one): only the client's history is not linearizable",
            ),
        ),
        (
            Bug::AbortOnlyCounted,
            BugSpec::new(
                6,
                "abort-only-counted",
                "liveness: the coordinator sends Abort only to the participants whose yes vote it has counted (those it knows hold a prepared write), as if a participant it has not heard from had nothing to undo: when a no vote or the timeout aborts the transaction while another participant's yes vote is still on its way, that participant has prepared and never hears the decision (the coordinator ignores its late vote); it stays in doubt for ever and the execution ends with the in-doubt monitor hot",
            ),
        ),
    ];
}

/// The parameters and their defaults (the only place they are written).
pub const PARAMS: [ParamSpec; 4] = [
    ParamSpec::new("participants", 2, 1..=MAX_PARTICIPANTS as u64, "number of participants"),
    ParamSpec::new(
        "clients",
        1,
        1..=MAX_CLIENTS as u64,
        "number of clients (each writes its own key, reading it back after each write)",
    ),
    ParamSpec::new(
        "transactions",
        2,
        1..=60,
        "writes (transactions) per client, each read back",
    )
    .exhaustive_max(2),
    noise::PARAM,
];

/// The model (see the module docs).
#[derive(Clone, Copy, Debug, Default)]
pub struct TwoPc;

/// One configuration of the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cfg {
    /// Number of participants (1..=[`MAX_PARTICIPANTS`]).
    pub participants: u8,
    /// Number of clients (1..=[`MAX_CLIENTS`]).
    pub clients: u8,
    /// Writes (transactions) per client, each followed by a read.
    pub transactions: u8,
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
            participants: params.get("participants") as u8,
            clients: params.get("clients") as u8,
            transactions: params.get("transactions") as u8,
            noise: params.get(noise::NOISE_PARAM) as u8,
            bug,
        }
    }

    /// The id of participant `i` (0-based).
    pub fn participant_id(&self, i: u8) -> MachineId {
        MachineId(2 + u32::from(i))
    }

    pub(crate) fn all_votes(&self) -> u8 {
        ((1u16 << self.participants) - 1) as u8
    }

    /// Send `msg()` to every participant, the last one first (so that
    /// participant 0 runs first).
    pub(crate) fn to_participants(&self, ctx: &mut Ctx<Self>, msg: impl Fn() -> Msg) {
        for i in (0..self.participants).rev() {
            ctx.send(self.participant_id(i), msg());
        }
    }
}

/// The machines.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Machine {
    /// The coordinator.
    Coordinator(Coordinator),
    /// The timer.
    Timer(Timer),
    /// A participant.
    Participant(Participant),
    /// A client.
    Client(Client),
    /// A background actor ([`crate::noise`]).
    Noise(noise::Actor),
}

/// The messages.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Msg {
    /// Client: start.
    Go,
    /// Client to coordinator: write `value` to `key`.
    Write {
        /// The client.
        from: MachineId,
        /// The key.
        key: u8,
        /// The value.
        value: u8,
    },
    /// Coordinator to client: whether the write committed.
    Result(bool),
    /// Coordinator to participant: prepare the write.
    Prepare {
        /// The transaction.
        txn: u8,
        /// The key.
        key: u8,
        /// The value.
        value: u8,
    },
    /// Participant to coordinator: its vote.
    Vote {
        /// The transaction.
        txn: u8,
        /// The participant's index.
        from: u8,
        /// Yes (commit) or no (abort).
        yes: bool,
    },
    /// Coordinator to participant: commit the transaction.
    Commit(u8),
    /// Coordinator to participant: abort the transaction.
    Abort(u8),
    /// Participant to itself: apply a committed write to the store.
    Apply {
        /// The key.
        key: u8,
        /// The value.
        value: u8,
    },
    /// Client to participant: read a key.
    Read {
        /// The client.
        from: MachineId,
        /// The key.
        key: u8,
    },
    /// Participant to client: the value read.
    Value(u8),
    /// Coordinator to timer: arm for a transaction.
    Start(u8),
    /// Coordinator to timer: disarm.
    Cancel(u8),
    /// Timer to itself: the moment it may fire.
    Tick(u8),
    /// Timer to coordinator: the transaction timed out.
    Timeout(u8),
    /// Background traffic ([`crate::noise`]).
    Noise(noise::Msg),
}

/// What the monitors observe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Note {
    /// Participant `p` voted no on `txn`.
    VotedNo {
        /// The participant's index.
        p: u8,
        /// The transaction.
        txn: u8,
    },
    /// Participant `p` committed (`true`) or aborted `txn`.
    Decided {
        /// The participant's index.
        p: u8,
        /// The transaction.
        txn: u8,
        /// Commit or abort.
        commit: bool,
    },
    /// A client read `got` back after writing `wrote`.
    ReadBack {
        /// The client's key.
        key: u8,
        /// The value it wrote.
        wrote: u8,
        /// Whether it was told the write committed.
        committed: bool,
        /// The value read.
        got: u8,
    },
    /// A client invoked a write or a read, or got its outcome (the history
    /// checked for linearizability against a key-value map).
    Client(Entry<KvMap>),
}

impl MachineModel for Cfg {
    type Machine = Machine;
    type Msg = Msg;
    type Announce = Note;
    type Monitor = Monitor;

    fn setup(&self, setup: &mut Setup<Self>) {
        setup.create(Machine::Coordinator(Coordinator {
            txn: 0,
            collecting: false,
            client: COORDINATOR,
            votes: 0,
        }));
        setup.create(Machine::Timer(Timer { armed: None }));
        for _ in 0..self.participants {
            setup.create(Machine::Participant(Participant {
                pending: None,
                unapplied: 0,
                store: [0; MAX_CLIENTS],
            }));
        }
        for key in 0..self.clients {
            let c = setup.create(Machine::Client(Client {
                key,
                round: 0,
                phase: Phase::Writing,
            }));
            setup.send(c, Msg::Go);
        }
        noise::setup(setup, self.noise, Machine::Noise, Msg::Noise);
    }

    fn kind(&self, m: &Machine) -> &'static str {
        match m {
            Machine::Coordinator(_) => "coordinator",
            Machine::Timer(_) => "timer",
            Machine::Participant(_) => "participant",
            Machine::Client(_) => "client",
            Machine::Noise(a) => a.kind(),
        }
    }

    fn state_name(&self, m: &Machine) -> Option<String> {
        Some(match m {
            Machine::Coordinator(c) => {
                format!("{} {}", if c.collecting { "collecting" } else { "idle" }, c.txn)
            }
            Machine::Timer(t) => match t.armed {
                Some(t) => format!("armed {t}"),
                None => "disarmed".into(),
            },
            Machine::Participant(p) => match p.pending {
                Some((t, _, _)) => format!("prepared {t}"),
                None => "ready".into(),
            },
            Machine::Client(c) => format!("round {} {:?}", c.round, c.phase),
            Machine::Noise(_) => return None,
        })
    }

    fn receive(&self, m: &Machine, msg: &Msg) -> Receive {
        match (m, msg) {
            (Machine::Coordinator(c), Msg::Write { .. }) if c.collecting => Receive::Defer,
            (Machine::Participant(p), Msg::Read { .. })
                if p.unapplied > 0 && self.bug != Some(Bug::ReadBeforeApply) =>
            {
                Receive::Defer
            }
            (
                Machine::Client(Client {
                    phase: Phase::Reading { .. },
                    ..
                }),
                Msg::Result(_),
            ) => Receive::Ignore,
            (Machine::Coordinator(_), Msg::Write { .. } | Msg::Vote { .. } | Msg::Timeout(_))
            | (Machine::Timer(_), Msg::Start(_) | Msg::Cancel(_) | Msg::Tick(_))
            | (
                Machine::Participant(_),
                Msg::Prepare { .. } | Msg::Commit(_) | Msg::Abort(_) | Msg::Apply { .. } | Msg::Read { .. },
            )
            | (Machine::Client(_), Msg::Go | Msg::Result(_) | Msg::Value(_))
            | (Machine::Noise(_), Msg::Noise(_)) => Receive::Handle,
            _ => Receive::Unhandled,
        }
    }

    fn handle(&self, m: &mut Machine, msg: &Msg, ctx: &mut Ctx<Self>) {
        match m {
            Machine::Coordinator(c) => c.handle(self, msg, ctx),
            Machine::Timer(t) => t.handle(msg, ctx),
            Machine::Participant(p) => p.handle(self, msg, ctx),
            Machine::Client(c) => c.handle(self, msg, ctx),
            Machine::Noise(a) => {
                let m = if let Msg::Noise(m) = msg { Some(m) } else { None };
                a.handle(m, ctx, Msg::Noise)
            }
        }
    }

    fn observe(&self, mon: &mut Monitor, note: &Note) -> Result<(), MonitorError> {
        mon.observe(note)
    }

    /// Liveness (`answered`, `in-doubt`): see the module docs.
    fn has_liveness(&self) -> bool {
        true
    }

    fn hot(&self, world: &World<Self>) -> bool {
        monitor::hot(world)
    }

    fn owed(&self, world: &World<Self>) -> Option<MonitorError> {
        monitor::owed(world)
    }

    /// Participants are interchangeable but for the two a client may read
    /// from (the first and the last): those two form one group, the ones
    /// between another. Ids are held as participant indices (votes, the
    /// coordinator's tally, the monitor's masks) and client ids.
    fn symmetry(&self) -> Vec<Vec<MachineId>> {
        let n = self.participants;
        let ends = if n > 1 {
            vec![self.participant_id(0), self.participant_id(n - 1)]
        } else {
            vec![]
        };
        let middle = (1..n.saturating_sub(1)).map(|i| self.participant_id(i)).collect();
        vec![ends, middle]
    }

    fn rename(&self, value: Renamed<'_, Self>, f: &dyn Fn(MachineId) -> MachineId) {
        let index = |p: u8| (f(self.participant_id(p)).0 - self.participant_id(0).0) as u8;
        let mask = |m: u8| {
            (0..self.participants)
                .filter(|&p| m >> p & 1 == 1)
                .map(|p| 1u8 << index(p))
                .sum()
        };
        match value {
            Renamed::Machine(Machine::Coordinator(c)) => {
                c.client = f(c.client);
                c.votes = mask(c.votes);
            }
            Renamed::Machine(_) => {}
            Renamed::Msg(Msg::Write { from, .. } | Msg::Read { from, .. }) => *from = f(*from),
            Renamed::Msg(Msg::Vote { from, .. }) => *from = index(*from),
            Renamed::Msg(_) => {}
            Renamed::Monitor(m) => {
                for x in m.commits.iter_mut().chain(m.aborts.iter_mut()) {
                    *x = mask(*x);
                }
            }
        }
    }

    fn handlers(&self) -> Vec<(&'static str, &'static str)> {
        let mut h = vec![
            ("client", "Go"),
            ("client", "Result"),
            ("client", "Value"),
            ("coordinator", "Timeout"),
            ("coordinator", "Vote"),
            ("coordinator", "Write"),
            ("participant", "Abort"),
            ("participant", "Apply"),
            ("participant", "Commit"),
            ("participant", "Prepare"),
            ("participant", "Read"),
            ("timer", "Cancel"),
            ("timer", "Start"),
            ("timer", "Tick"),
        ];
        h.extend(noise::handlers(self.noise));
        h
    }

    fn monitor_states(&self, mon: &Monitor) -> Vec<(&'static str, &'static str)> {
        let any = |masks: &[u8]| masks.iter().any(|m| *m != 0);
        let state = match (any(&mon.commits), any(&mon.aborts)) {
            (false, false) => "nothing decided",
            (true, false) => "commits only",
            (false, true) => "aborts only",
            (true, true) => "commits and aborts",
        };
        vec![("atomicity", state)]
    }

    fn sometimes(&self) -> Vec<&'static str> {
        vec!["transaction-committed", "transaction-aborted", "read-back-done"]
    }

    fn holds(&self, world: &World<Self>, property: usize) -> bool {
        let all = (1u16 << self.participants) - 1;
        match property {
            // Every participant committed one transaction.
            0 => world.monitor().commits.iter().any(|m| u16::from(*m) == all),
            // A participant aborted one (or voted against it).
            1 => world.monitor().aborts.iter().any(|m| *m != 0),
            // A client read its key back after a write.
            2 => world
                .slots()
                .iter()
                .any(|s| matches!(&s.machine, Machine::Client(c) if c.round > 0)),
            _ => false,
        }
    }
}

impl Model for TwoPc {
    type Program = Machines<Cfg>;

    fn info(&self) -> ModelInfo {
        ModelInfo::new("2pc", "two-phase commit: coordinator, participants voting nondeterministically, a timer whose cancel may fail, clients writing then reading back").params(PARAMS).bugs(Bug::specs())
    }

    fn build(&self, params: &Params, bug: Option<u32>) -> Machines<Cfg> {
        Machines(Cfg::new(params, Bug::from_build(bug)))
    }
}

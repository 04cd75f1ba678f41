//! `twophase`: Lamport's TwoPhase commit specification (`TwoPhase.tla`),
//! written as a user of mcheck would write a specification: plain structs,
//! a set of messages, and the TLA+ actions by name.
//!
//! A transaction manager (TM) and `rms` resource managers (RMs) decide
//! together whether a transaction commits. A working RM either prepares,
//! telling the TM so with a `Prepared` message, or chooses to abort. The TM
//! records the `Prepared` messages it receives; once every RM has prepared
//! it may commit, and until it decides it may abort. It sends its decision
//! to all, and each RM adopts the decision it receives. Messages are never
//! lost or consumed: `msgs` is a set that only grows.
//!
//! The specification's variables are the fields of [`TwoPhaseState`]
//! (`rmState`, `tmState`, `tmPrepared`, `msgs`); its actions are the
//! variants of [`Action`], each with its TLA+ guard and effect, the guards
//! written in [`TwoPhaseSpec::actions`] and the effects in
//! [`TwoPhaseSpec::next`]. The invariant `TCConsistent` (no RM has
//! committed while another has aborted) is checked after every step.
//!
//! The TM is actor 0 and RM `r` actor `r` (`rm1`, `rm2`, ...). An actor's
//! alternatives are its enabled actions in this order: the TM's
//! `TMRcvPrepared(r)` for each `r` in turn, `TMCommit`, `TMAbort`; an
//! RM's `RMPrepare`, `RMChooseToAbort`, `RMRcvCommitMsg`, `RMRcvAbortMsg`.
//! As in TLA+, an enabled action is a step even when it changes nothing (an
//! RM receiving `Commit` again), so the reachable states and transitions
//! are TLC's: 288 states for 3 RMs, 1,568 for 4, 8,832 for 5, and
//! 10,340,352 states with 123,558,401 transitions for 9. The specification
//! never ends (a committed RM can always receive `Commit` again), so a
//! sampled execution runs to `--max-steps`. Putting a message into `msgs`
//! is reported to explorers as a send: `RMPrepare(r)` from `r` to the TM,
//! `TMCommit` and `TMAbort` from the TM to every RM. The RMs are
//! interchangeable (`--symmetry` counts 314 orbits for 5 RMs), and the
//! seeded bug is [`Bug::TmCommitEarly`].
//!
//! [`crate::twophase_packed`] is the same specification packed into one
//! `u64` for speed (the `twophase-packed` benchmark), with the same
//! actors, alternatives, sends and bug: `models/tests/all/twophase.rs`
//! walks both side by side and checks them against TLC's counts;
//! `docs/performance.md` compares their speed.

use mcheck_checker::cache::fingerprint;
use mcheck_checker::coverage::{Hit, How};
use mcheck_checker::model::SeededBug;
use mcheck_checker::{
    ActorId, ActorInfo, BugSpec, Covers, Enabled, Event, Model, ModelInfo, ParamSpec, Params, Program, StepTrace,
    Symmetry, Traces, Violation,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;

/// A resource manager, numbered from 0: `rm1` is 0 (and actor 1).
pub type Rm = usize;

/// `rmState[r]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum RmState {
    /// `"working"`.
    Working,
    /// `"prepared"`.
    Prepared,
    /// `"committed"`.
    Committed,
    /// `"aborted"`.
    Aborted,
}

/// `tmState`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum TmState {
    /// `"init"`.
    Init,
    /// `"committed"`.
    Committed,
    /// `"aborted"`.
    Aborted,
}

/// A message in `msgs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Message {
    /// `[type |-> "Prepared", rm |-> r]`.
    Prepared(Rm),
    /// `[type |-> "Commit"]`.
    Commit,
    /// `[type |-> "Abort"]`.
    Abort,
}

/// A state: the specification's variables.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TwoPhaseState {
    /// `rmState`, indexed by [`Rm`].
    pub rm_state: Vec<RmState>,
    /// `tmState`.
    pub tm_state: TmState,
    /// `tmPrepared`: the RMs whose `Prepared` message the TM has received.
    pub tm_prepared: BTreeSet<Rm>,
    /// `msgs`: every message ever sent.
    pub msgs: BTreeSet<Message>,
}

/// An action of the specification, named as in TLA+.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// `TMRcvPrepared(r)`: `tmState = "init"` and `Prepared(r)` is in
    /// `msgs`; adds `r` to `tmPrepared`.
    TmRcvPrepared(Rm),
    /// `TMCommit`: `tmState = "init"` and `tmPrepared = RM`; the TM
    /// commits and sends `Commit`.
    TmCommit,
    /// `TMAbort`: `tmState = "init"`; the TM aborts and sends `Abort`.
    TmAbort,
    /// `RMPrepare(r)`: `rmState[r] = "working"`; `r` prepares and sends
    /// `Prepared(r)`.
    RmPrepare(Rm),
    /// `RMChooseToAbort(r)`: `rmState[r] = "working"`; `r` aborts.
    RmChooseToAbort(Rm),
    /// `RMRcvCommitMsg(r)`: `Commit` is in `msgs`; `r` commits.
    RmRcvCommitMsg(Rm),
    /// `RMRcvAbortMsg(r)`: `Abort` is in `msgs`; `r` aborts.
    RmRcvAbortMsg(Rm),
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Action::TmRcvPrepared(r) => write!(f, "TMRcvPrepared(rm{})", r + 1),
            Action::TmCommit => f.write_str("TMCommit"),
            Action::TmAbort => f.write_str("TMAbort"),
            Action::RmPrepare(r) => write!(f, "RMPrepare(rm{})", r + 1),
            Action::RmChooseToAbort(r) => write!(f, "RMChooseToAbort(rm{})", r + 1),
            Action::RmRcvCommitMsg(r) => write!(f, "RMRcvCommitMsg(rm{})", r + 1),
            Action::RmRcvAbortMsg(r) => write!(f, "RMRcvAbortMsg(rm{})", r + 1),
        }
    }
}

/// The seeded bugs (also [`crate::twophase_packed`]'s).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Bug {
    /// `tm-commit-early`: `TMCommit` once one RM has prepared.
    TmCommitEarly,
}

impl SeededBug for Bug {
    const TABLE: &'static [(Bug, BugSpec)] = &[(
        Bug::TmCommitEarly,
        BugSpec::new(
            1,
            "tm-commit-early",
            "TMCommit is enabled as soon as tmPrepared is non-empty (one RM's Prepared \
                message received) instead of when it equals RM. The TM then sends Commit while \
                another RM is still working; that RM may RMChooseToAbort, and once a prepared RM \
                receives Commit, TCConsistent fails. With 2+ RMs; needs at least one delay under a \
                run-to-completion explorer, since at delay 0 the TM runs first, when only TMAbort is \
                enabled.",
        ),
    )];
}

/// The parameters and their defaults (the only place they are written).
pub const PARAMS: [ParamSpec; 1] = [ParamSpec::new("rms", 3, 1..=14, "number of resource managers").exhaustive_max(9)];

/// The TM's actor.
const TM: ActorId = ActorId(0);

/// The specification for a number of RMs, correct or with a seeded bug.
#[derive(Clone, Debug)]
pub struct TwoPhaseSpec {
    /// The number of RMs.
    pub rms: usize,
    /// The seeded bug switched on, if any.
    pub bug: Option<Bug>,
}

impl TwoPhaseSpec {
    /// The actions of `actor` enabled at `s`: its alternatives, in order.
    pub fn actions(&self, s: &TwoPhaseState, actor: ActorId) -> Vec<Action> {
        let mut actions = Vec::new();
        if actor == TM {
            if s.tm_state == TmState::Init {
                let received = (0..self.rms).filter(|r| s.msgs.contains(&Message::Prepared(*r)));
                actions.extend(received.map(Action::TmRcvPrepared));
                let all_prepared = match self.bug {
                    None => s.tm_prepared.len() == self.rms,
                    Some(Bug::TmCommitEarly) => !s.tm_prepared.is_empty(),
                };
                if all_prepared {
                    actions.push(Action::TmCommit);
                }
                actions.push(Action::TmAbort);
            }
            return actions;
        }
        let r = actor.0 as usize - 1;
        if s.rm_state[r] == RmState::Working {
            actions.extend([Action::RmPrepare(r), Action::RmChooseToAbort(r)]);
        }
        if s.msgs.contains(&Message::Commit) {
            actions.push(Action::RmRcvCommitMsg(r));
        }
        if s.msgs.contains(&Message::Abort) {
            actions.push(Action::RmRcvAbortMsg(r));
        }
        actions
    }

    /// Apply `action`, whose guard holds, to `s`.
    pub fn next(&self, s: &mut TwoPhaseState, action: Action) {
        match action {
            Action::TmRcvPrepared(r) => {
                s.tm_prepared.insert(r);
            }
            Action::TmCommit => {
                s.tm_state = TmState::Committed;
                s.msgs.insert(Message::Commit);
            }
            Action::TmAbort => {
                s.tm_state = TmState::Aborted;
                s.msgs.insert(Message::Abort);
            }
            Action::RmPrepare(r) => {
                s.rm_state[r] = RmState::Prepared;
                s.msgs.insert(Message::Prepared(r));
            }
            Action::RmChooseToAbort(r) | Action::RmRcvAbortMsg(r) => s.rm_state[r] = RmState::Aborted,
            Action::RmRcvCommitMsg(r) => s.rm_state[r] = RmState::Committed,
        }
    }

    /// `TCConsistent`: no RM has committed while another has aborted.
    pub fn tc_consistent(&self, s: &TwoPhaseState) -> Result<(), Violation> {
        let first = |want| s.rm_state.iter().position(|&st| st == want);
        match (first(RmState::Committed), first(RmState::Aborted)) {
            (Some(c), Some(a)) => Err(Violation::invariant(format!(
                "TCConsistent violated: rm{} committed while rm{} aborted",
                c + 1,
                a + 1
            ))),
            _ => Ok(()),
        }
    }

    /// Take alternative `alt` of `actor`: the action, its sends, the
    /// invariant.
    fn step(
        &self,
        s: &mut TwoPhaseState,
        actor: ActorId,
        alt: u32,
        events: &mut Vec<Event>,
    ) -> Result<Action, Violation> {
        let action = self.actions(s, actor)[alt as usize];
        self.next(s, action);
        match action {
            Action::RmPrepare(r) => events.push(Event::Sent { from: rm(r), to: TM }),
            Action::TmCommit | Action::TmAbort => {
                events.extend((0..self.rms).map(|r| Event::Sent { from: TM, to: rm(r) }));
            }
            _ => {}
        }
        self.tc_consistent(s)?;
        Ok(action)
    }
}

/// RM `r`'s actor.
fn rm(r: Rm) -> ActorId {
    ActorId(r as u32 + 1)
}

/// The name of `actor`: `tm`, `rm1`, `rm2`, ...
pub fn actor_name(actor: ActorId) -> String {
    match actor.0 {
        0 => "tm".into(),
        r => format!("rm{r}"),
    }
}

impl Program for TwoPhaseSpec {
    type State = TwoPhaseState;

    fn initial(&self) -> TwoPhaseState {
        TwoPhaseState {
            rm_state: vec![RmState::Working; self.rms],
            tm_state: TmState::Init,
            tm_prepared: BTreeSet::new(),
            msgs: BTreeSet::new(),
        }
    }

    fn actors(&self, _s: &TwoPhaseState) -> Vec<ActorInfo> {
        (0..=self.rms as u32)
            .map(|a| ActorInfo {
                id: ActorId(a),
                kind: if a == 0 { "tm" } else { "rm" },
                name: actor_name(ActorId(a)),
            })
            .collect()
    }

    fn enabled(&self, s: &TwoPhaseState, out: &mut Vec<Enabled>) {
        for actor in (0..=self.rms as u32).map(ActorId) {
            let alternatives = self.actions(s, actor).len() as u32;
            if alternatives > 0 {
                out.push(Enabled { actor, alternatives });
            }
        }
    }

    fn execute(
        &self,
        s: &mut TwoPhaseState,
        actor: ActorId,
        alt: u32,
        events: &mut Vec<Event>,
    ) -> Result<(), Violation> {
        self.step(s, actor, alt, events).map(|_| ())
    }

    fn symmetry(&self) -> Option<&dyn Symmetry<TwoPhaseState>> {
        Some(self)
    }

    fn coverage(&self) -> Option<&dyn Covers<TwoPhaseState>> {
        Some(self)
    }

    fn traces(&self) -> Option<&dyn Traces<TwoPhaseState>> {
        Some(self)
    }
}

/// Actors by name (`tm`, `rm1`, ...), steps by their action.
impl Traces<TwoPhaseState> for TwoPhaseSpec {
    fn actor_name(&self, _s: &TwoPhaseState, actor: ActorId) -> String {
        actor_name(actor)
    }

    fn execute_traced(
        &self,
        s: &mut TwoPhaseState,
        actor: ActorId,
        alt: u32,
        events: &mut Vec<Event>,
        trace: &mut StepTrace,
    ) -> Result<(), Violation> {
        let action = self.actions(s, actor)[alt as usize];
        trace.handled = Some(action.to_string());
        trace.notes.push(action.to_string());
        trace.state_before = Some(s.to_string());
        let result = self.step(s, actor, alt, events);
        trace.state_after = Some(s.to_string());
        let message = match action {
            Action::TmCommit => "Commit".to_string(),
            Action::TmAbort => "Abort".to_string(),
            _ => format!("Prepared({})", actor_name(actor)),
        };
        for e in events.iter() {
            if let Event::Sent { to, .. } = e {
                trace.sent.push((actor_name(*to), message.clone()));
            }
        }
        result.map(|_| ())
    }
}

/// Coverage counts each step as its action (`tm TMCommit`).
impl Covers<TwoPhaseState> for TwoPhaseSpec {
    fn cover_step(&self, s: &TwoPhaseState, actor: ActorId, alt: u32, out: &mut Vec<Hit>) {
        let action = self.actions(s, actor)[alt as usize];
        out.push(Hit::new(actor_name(actor), action.to_string(), How::Ran));
    }
}

/// The RMs are interchangeable: an RM is its `rmState`, whether it is in
/// `tmPrepared` and whether its `Prepared` message was sent, and nothing
/// else names an RM (`TCConsistent` and the bug count RMs, never name one).
/// An orbit is these records sorted, with the rest of the state.
impl Symmetry<TwoPhaseState> for TwoPhaseSpec {
    fn canonical_fingerprint(&self, s: &TwoPhaseState) -> Option<u64> {
        let mut records: Vec<(RmState, bool, bool)> = (0..self.rms)
            .map(|r| {
                let sent = s.msgs.contains(&Message::Prepared(r));
                (s.rm_state[r], s.tm_prepared.contains(&r), sent)
            })
            .collect();
        records.sort_unstable();
        let decision = (s.msgs.contains(&Message::Commit), s.msgs.contains(&Message::Abort));
        Some(fingerprint(&(records, s.tm_state, decision)))
    }

    fn groups(&self) -> Vec<String> {
        vec![format!("rm1..rm{} (the resource managers)", self.rms)]
    }
}

/// A short rendering for traces:
/// `rm=[w,p,c,a] tm=init tmPrepared={1,2} msgs={P1,P2,Commit}`.
impl fmt::Display for TwoPhaseState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rms: Vec<&str> = self
            .rm_state
            .iter()
            .map(|&st| ["w", "p", "c", "a"][st as usize])
            .collect();
        let tm = ["init", "committed", "aborted"][self.tm_state as usize];
        let prepared: Vec<String> = self.tm_prepared.iter().map(|r| (r + 1).to_string()).collect();
        let msgs: Vec<String> = (self.msgs.iter())
            .map(|m| match m {
                Message::Prepared(r) => format!("P{}", r + 1),
                decision => format!("{decision:?}"),
            })
            .collect();
        let (rms, prepared, msgs) = (rms.join(","), prepared.join(","), msgs.join(","));
        write!(f, "rm=[{rms}] tm={tm} tmPrepared={{{prepared}}} msgs={{{msgs}}}")
    }
}

/// The TwoPhase model (`mcheck run twophase`).
#[derive(Clone, Copy, Debug, Default)]
pub struct TwoPhase;

impl Model for TwoPhase {
    type Program = TwoPhaseSpec;

    fn info(&self) -> ModelInfo {
        ModelInfo::new(
            "twophase",
            "Lamport's TwoPhase commit specification (TwoPhase.tla) with plain structs and a set of \
                messages: a transaction manager and N resource managers; invariant TCConsistent (no resource \
                manager committed while another aborted)",
        )
        .params(PARAMS)
        .bugs(Bug::specs())
    }

    fn build(&self, params: &Params, bug: Option<u32>) -> TwoPhaseSpec {
        TwoPhaseSpec {
            rms: params.usize("rms"),
            bug: Bug::from_build(bug),
        }
    }
}

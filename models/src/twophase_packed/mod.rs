//! `twophase-packed`: the TwoPhase specification of [`crate::twophase`]
//! (its story, actions and seeded bug are told there), packed into one
//! `u64` for speed: the benchmark that the engine's performance figures
//! measure (`docs/performance.md`). A raw transition system
//! (ARCHITECTURE.md, "Programs and capabilities") with the same actors,
//! alternatives, sends, invariant and bug as `twophase`, so that every
//! search counts the same states and transitions on both
//! (`models/tests/all/twophase.rs` walks them side by side); only the
//! representation differs:
//!
//! * the state is [`PackedState`], bit fields in one `u64`, and
//!   [`PackedProgram::unpack`] turns it into the readable state;
//! * the enabled actions are bitmasks (`tm_actions`, `rm_actions`),
//!   listed without building them;
//! * the symmetry sorts 4-bit RM records with a counting sort.
//!
//! # Rounds (a long workload)
//!
//! With `rounds` > 1 (not in TwoPhase.tla), once every RM has committed or
//! aborted the TM may take `TMNextRound`: the next transaction starts from
//! the initial state, with a round counter in the state's top bits, up to
//! `rounds` transactions. With one round (the default) the specification is
//! `twophase`'s. `TMNextRound` reports a `Sent` from the TM to every RM.

use mcheck_checker::coverage::{Hit, How};
use mcheck_checker::model::SeededBug;
use mcheck_checker::{
    ActorId, ActorInfo, Covers, Enabled, Event, Model, ModelInfo, ParamSpec, Params, Program, StepTrace, Symmetry,
    Traces, Violation, ViolationKind,
};
use std::collections::BTreeSet;
use std::fmt;

mod state;

pub use crate::twophase::Bug;
use crate::twophase::{self, Message, RmState, TmState, TwoPhaseSpec, TwoPhaseState};
use state::Layout;
pub use state::{MAX_RMS_WITH_ROUNDS, PackedState};

/// The largest number of resource managers: the state packs into one `u64`
/// (`4N + 4` bits).
pub const MAX_RMS: usize = 14;

/// One action of the specification.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Action {
    /// `TMRcvPrepared(rm)` with the RM's index from 0.
    TmRcvPrepared(usize),
    /// `TMCommit`.
    TmCommit,
    /// `TMAbort`.
    TmAbort,
    /// `TMNextRound` (an extension: start the next transaction from the
    /// initial state once every RM has committed or aborted).
    TmNextRound,
    /// `RMPrepare(rm)`.
    RmPrepare(usize),
    /// `RMChooseToAbort(rm)`.
    RmChooseToAbort(usize),
    /// `RMRcvCommitMsg(rm)`.
    RmRcvCommitMsg(usize),
    /// `RMRcvAbortMsg(rm)`.
    RmRcvAbortMsg(usize),
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Action::TmRcvPrepared(i) => write!(f, "TMRcvPrepared(rm{})", i + 1),
            Action::TmCommit => f.write_str("TMCommit"),
            Action::TmAbort => f.write_str("TMAbort"),
            Action::TmNextRound => f.write_str("TMNextRound"),
            Action::RmPrepare(i) => write!(f, "RMPrepare(rm{})", i + 1),
            Action::RmChooseToAbort(i) => write!(f, "RMChooseToAbort(rm{})", i + 1),
            Action::RmRcvCommitMsg(i) => write!(f, "RMRcvCommitMsg(rm{})", i + 1),
            Action::RmRcvAbortMsg(i) => write!(f, "RMRcvAbortMsg(rm{})", i + 1),
        }
    }
}

/// The parameters and their defaults (the only place they are written).
pub const PARAMS: [ParamSpec; 2] = [
    ParamSpec::new("rms", 3, 1..=MAX_RMS as u64, "number of resource managers").exhaustive_max(9),
    ParamSpec::new(
        "rounds",
        1,
        1..=MAX_ROUNDS,
        "transactions run one after the other: once every RM has committed or aborted, TMNextRound starts the next from the initial state (1 when rms is above 13)",
    ),
];

/// The largest number of rounds (transactions).
pub const MAX_ROUNDS: u64 = 60;

/// The packed TwoPhase program for a number of RMs, correct or with a
/// seeded bug.
#[derive(Clone, Debug)]
pub struct PackedProgram {
    layout: Layout,
    /// Transactions run one after the other (1: the specification as is).
    rounds: u64,
    /// The readable specification it packs: its RMs, bug, actors and names.
    spec: TwoPhaseSpec,
}

impl PackedProgram {
    /// The specification with `rms` resource managers (1 to [`MAX_RMS`];
    /// panics outside that range, which `Params::resolve` rules out) and
    /// seeded bug `bug` (`None`: the correct specification).
    pub fn new(rms: usize, bug: Option<Bug>) -> PackedProgram {
        PackedProgram::with_rounds(rms, 1, bug)
    }

    /// The specification with `rms` resource managers run for `rounds`
    /// transactions one after the other (1 to [`MAX_ROUNDS`], and 1 when
    /// `rms` is above [`MAX_RMS_WITH_ROUNDS`]; panics otherwise, which
    /// `Params::resolve` and [`Model::effective_params`] rule out).
    pub fn with_rounds(rms: usize, rounds: u64, bug: Option<Bug>) -> PackedProgram {
        assert!(
            (1..=MAX_RMS).contains(&rms),
            "twophase-packed takes 1 to {MAX_RMS} resource managers, not {rms}"
        );
        assert!(
            (1..=MAX_ROUNDS).contains(&rounds) && (rounds == 1 || rms <= MAX_RMS_WITH_ROUNDS),
            "twophase-packed with {rms} resource managers takes 1 to {MAX_ROUNDS} rounds (1 above {MAX_RMS_WITH_ROUNDS} resource managers), not {rounds}"
        );
        PackedProgram {
            layout: Layout::new(rms),
            rounds,
            spec: TwoPhaseSpec { rms, bug },
        }
    }

    /// The number of resource managers.
    pub fn rms(&self) -> usize {
        self.layout.n
    }

    /// `s` as the readable specification's state.
    pub fn unpack(&self, s: &PackedState) -> TwoPhaseState {
        let l = &self.layout;
        let members = |mask: u64| (0..l.n).filter(move |i| mask >> i & 1 == 1);
        let mut msgs: BTreeSet<Message> = members(s.msg_prepared(l)).map(Message::Prepared).collect();
        msgs.extend(s.flag(l.msg_commit).then_some(Message::Commit));
        msgs.extend(s.flag(l.msg_abort).then_some(Message::Abort));
        TwoPhaseState {
            rm_state: (0..l.n).map(|i| s.rm(i)).collect(),
            tm_state: s.tm(l),
            tm_prepared: members(s.tm_prepared(l)).collect(),
            msgs,
        }
    }

    /// The enabled actions of the TM as a bitmask: bit `i < n`
    /// `TMRcvPrepared(rm i+1)`, bit `n` `TMCommit`, bit `n + 1` `TMAbort`.
    #[inline(always)]
    fn tm_actions(&self, s: PackedState) -> u32 {
        let l = &self.layout;
        if s.tm(l) != TmState::Init {
            return u32::from(self.next_round_enabled(s)) << (l.n + 2);
        }
        let tm_prepared = s.tm_prepared(l);
        let commit = if self.spec.bug == Some(Bug::TmCommitEarly) {
            tm_prepared != 0
        } else {
            tm_prepared == l.all
        };
        (s.msg_prepared(l) as u32) | (u32::from(commit) << l.n) | (1 << (l.n + 1))
    }

    /// `TMNextRound` (not in TwoPhase.tla): the transaction is over (every
    /// RM committed or aborted) and a later round is left.
    fn next_round_enabled(&self, s: PackedState) -> bool {
        let rms = s.0 & self.layout.rm_fields;
        let decided = (rms >> 1) & LOW_BITS;
        decided == rms_low_bits(self.layout.n) && s.round() + 1 < self.rounds
    }

    /// The enabled actions of RM `i` (from 0) as a bitmask: bit 0
    /// `RMPrepare`, 1 `RMChooseToAbort`, 2 `RMRcvCommitMsg`, 3
    /// `RMRcvAbortMsg`.
    #[inline(always)]
    fn rm_actions(&self, s: PackedState, i: usize) -> u32 {
        let working = rm_working(s, i);
        working
            | (working << 1)
            | (u32::from(s.flag(self.layout.msg_commit)) << 2)
            | (u32::from(s.flag(self.layout.msg_abort)) << 3)
    }

    /// The action that alternative `alt` of `actor` means in `s`, or
    /// `None` if `actor` has fewer enabled actions.
    #[inline(always)]
    pub fn action(&self, s: &PackedState, actor: ActorId, alt: u32) -> Option<Action> {
        let n = self.layout.n;
        let a = actor.0 as usize;
        if a == 0 {
            let bit = nth_set_bit(self.tm_actions(*s), alt)? as usize;
            return Some(match bit {
                b if b < n => Action::TmRcvPrepared(b),
                b if b == n => Action::TmCommit,
                b if b == n + 1 => Action::TmAbort,
                _ => Action::TmNextRound,
            });
        }
        if a > n {
            return None;
        }
        // `rm_actions`'s bits in order, without building the mask: the two
        // of a working RM, then one per decision message sent.
        let i = a - 1;
        let working = 2 * rm_working(*s, i);
        if alt < working {
            return Some(if alt == 0 {
                Action::RmPrepare(i)
            } else {
                Action::RmChooseToAbort(i)
            });
        }
        let commit = s.flag(self.layout.msg_commit);
        match (alt - working, commit, s.flag(self.layout.msg_abort)) {
            (0, true, _) => Some(Action::RmRcvCommitMsg(i)),
            (0, false, true) | (1, true, true) => Some(Action::RmRcvAbortMsg(i)),
            _ => None,
        }
    }

    /// Apply `action` to `s` (its guard must hold), reporting sends.
    #[inline(always)]
    fn apply(&self, s: &mut PackedState, action: Action, events: &mut Vec<Event>) {
        let l = &self.layout;
        let tm = ActorId(0);
        match action {
            Action::TmRcvPrepared(i) => s.0 |= 1u64 << (l.tm_prepared + i as u32),
            Action::TmCommit => {
                s.set_tm(l, TmState::Committed);
                s.0 |= 1u64 << l.msg_commit;
                events.extend((1..=l.n as u32).map(|r| Event::Sent {
                    from: tm,
                    to: ActorId(r),
                }));
            }
            Action::TmAbort => {
                s.set_tm(l, TmState::Aborted);
                s.0 |= 1u64 << l.msg_abort;
                events.extend((1..=l.n as u32).map(|r| Event::Sent {
                    from: tm,
                    to: ActorId(r),
                }));
            }
            Action::TmNextRound => {
                s.next_round();
                events.extend((1..=l.n as u32).map(|r| Event::Sent {
                    from: tm,
                    to: ActorId(r),
                }));
            }
            Action::RmPrepare(i) => {
                s.set_rm(i, RmState::Prepared);
                s.0 |= 1u64 << (l.msg_prepared + i as u32);
                events.push(Event::Sent {
                    from: ActorId(i as u32 + 1),
                    to: tm,
                });
            }
            Action::RmChooseToAbort(i) => s.set_rm(i, RmState::Aborted),
            Action::RmRcvCommitMsg(i) => s.set_rm(i, RmState::Committed),
            Action::RmRcvAbortMsg(i) => s.set_rm(i, RmState::Aborted),
        }
    }

    /// `TCConsistent`: a violation if some RM is committed while another is
    /// aborted in `s`.
    #[inline(always)]
    pub fn check(&self, s: &PackedState) -> Result<(), Violation> {
        // Two bits per RM: committed is 0b10, aborted 0b11.
        let rms = s.0 & self.layout.rm_fields;
        let (hi, lo) = ((rms >> 1) & LOW_BITS, rms & LOW_BITS);
        let (committed, aborted) = (hi & !lo, hi & lo);
        if committed == 0 || aborted == 0 {
            return Ok(());
        }
        Err(inconsistent(committed, aborted))
    }

    /// A short rendering of `s`: [`TwoPhaseState`]'s, after the round
    /// when there are several.
    pub fn render(&self, s: &PackedState) -> String {
        let text = self.unpack(s).to_string();
        if self.rounds > 1 {
            format!("round={} {text}", s.round() + 1)
        } else {
            text
        }
    }

    /// Executes alternative `alt` of `actor`: the action, its sends, the
    /// invariant. Inlined into `execute`, the path every search takes for
    /// every transition; the violations are built out of line.
    #[inline(always)]
    fn step(
        &self,
        s: &mut PackedState,
        actor: ActorId,
        alt: u32,
        events: &mut Vec<Event>,
    ) -> Result<Action, Violation> {
        let Some(action) = self.action(s, actor, alt) else {
            return Err(self.not_enabled(s, actor, alt));
        };
        self.apply(s, action, events);
        self.check(s)?;
        Ok(action)
    }

    /// Outside the Program contract: reported, not panicked on.
    #[cold]
    #[inline(never)]
    fn not_enabled(&self, s: &PackedState, actor: ActorId, alt: u32) -> Violation {
        Violation::new(
            ViolationKind::Panic,
            self.actor_name(s, actor),
            format!("mcheck bug: twophase-packed executed actor {actor} alternative {alt}, which is not enabled"),
        )
    }
}

/// The `TCConsistent` violation of a state whose RM fields have the
/// `committed` and `aborted` low bits set.
#[cold]
#[inline(never)]
fn inconsistent(committed: u64, aborted: u64) -> Violation {
    Violation::invariant(format!(
        "TCConsistent violated: rm{} committed while rm{} aborted",
        committed.trailing_zeros() / 2 + 1,
        aborted.trailing_zeros() / 2 + 1
    ))
}

/// Bit 0 of every 2-bit RM field.
const LOW_BITS: u64 = 0x5555_5555_5555_5555;

/// 1 if RM `i` of `s` is still working (its two bits 0), else 0: its
/// prepare and choose-to-abort actions are enabled.
#[inline(always)]
fn rm_working(s: PackedState, i: usize) -> u32 {
    u32::from((s.0 >> (2 * i)) & 3 == 0)
}

/// The low bit of each of the first `n` two-bit RM fields.
fn rms_low_bits(n: usize) -> u64 {
    LOW_BITS & ((1u64 << (2 * n)) - 1)
}

/// The `k`-th (from 0) set bit of `mask`.
fn nth_set_bit(mut mask: u32, k: u32) -> Option<u32> {
    for _ in 0..k {
        mask &= mask.wrapping_sub(1);
    }
    (mask != 0).then(|| mask.trailing_zeros())
}

impl Program for PackedProgram {
    type State = PackedState;

    fn initial(&self) -> PackedState {
        PackedState(0)
    }

    fn actors(&self, _s: &PackedState) -> Vec<ActorInfo> {
        self.spec.actors(&self.spec.initial())
    }

    #[inline]
    fn enabled(&self, s: &PackedState, out: &mut Vec<Enabled>) {
        let l = &self.layout;
        out.reserve(l.n + 1);
        let tm = self.tm_actions(*s);
        if tm != 0 {
            out.push(Enabled {
                actor: ActorId(0),
                alternatives: tm.count_ones(),
            });
        }
        // An RM's alternatives are `rm_actions`'s bits, counted without a
        // popcount per RM: two while working, plus one per decision sent
        // (builds with debug assertions check them against the masks).
        let decided = u32::from(s.flag(l.msg_commit)) + u32::from(s.flag(l.msg_abort));
        if decided != 0 {
            // Every RM is enabled.
            out.extend((0..l.n).map(|i| Enabled {
                actor: ActorId(i as u32 + 1),
                alternatives: 2 * rm_working(*s, i) + decided,
            }));
        } else {
            // The working RMs only: bit 2i of `working` for RM i.
            let rms = s.0 & l.rm_fields;
            let mut working = !(rms | rms >> 1) & l.rm_fields & LOW_BITS;
            while working != 0 {
                out.push(Enabled {
                    actor: ActorId(working.trailing_zeros() / 2 + 1),
                    alternatives: 2,
                });
                working &= working - 1;
            }
        }
        debug_assert!(
            out.iter()
                .filter(|e| e.actor.0 != 0)
                .map(|e| (e.actor.0 as usize - 1, e.alternatives))
                .eq((0..l.n)
                    .map(|i| (i, self.rm_actions(*s, i).count_ones()))
                    .filter(|&(_, k)| k != 0)),
            "twophase-packed: the listed RMs disagree with their action masks"
        );
    }

    #[inline(always)]
    fn execute(&self, s: &mut PackedState, actor: ActorId, alt: u32, events: &mut Vec<Event>) -> Result<(), Violation> {
        self.step(s, actor, alt, events).map(|_| ())
    }

    fn symmetry(&self) -> Option<&dyn Symmetry<PackedState>> {
        Some(self)
    }

    fn coverage(&self) -> Option<&dyn Covers<PackedState>> {
        Some(self)
    }

    fn traces(&self) -> Option<&dyn Traces<PackedState>> {
        Some(self)
    }
}

/// The spec's actors by name (`tm`, `rm1`, ...) and its actions.
impl Traces<PackedState> for PackedProgram {
    fn actor_name(&self, _s: &PackedState, actor: ActorId) -> String {
        twophase::actor_name(actor)
    }

    fn execute_traced(
        &self,
        s: &mut PackedState,
        actor: ActorId,
        alt: u32,
        events: &mut Vec<Event>,
        trace: &mut StepTrace,
    ) -> Result<(), Violation> {
        trace.state_before = Some(self.render(s));
        if let Some(action) = self.action(s, actor, alt) {
            trace.handled = Some(action.to_string());
            trace.notes.push(action.to_string());
        }
        let result = self.step(s, actor, alt, events);
        trace.state_after = Some(self.render(s));
        for e in events.iter() {
            if let Event::Sent { to, .. } = e {
                let msg = match result {
                    Ok(Action::TmCommit) => "Commit".to_string(),
                    Ok(Action::TmAbort) => "Abort".to_string(),
                    Ok(Action::TmNextRound) => "NextRound".to_string(),
                    _ => format!("Prepared(rm{})", actor.0),
                };
                trace.sent.push((self.actor_name(s, *to), msg));
            }
        }
        result.map(|_| ())
    }
}

impl Symmetry<PackedState> for PackedProgram {
    /// The resource managers are interchangeable: an RM's whole state is
    /// its `rmState`, its bit of `tmPrepared` and its `Prepared` message,
    /// and nothing else names an RM (the TM's state and the Commit/Abort
    /// flags are the same for every RM; `TCConsistent` and the seeded bug
    /// count RMs, never name one). The orbit's canonical form sorts these
    /// 4-bit RM records (a counting sort) and keeps the rest: exact.
    fn canonical_fingerprint(&self, s: &PackedState) -> Option<u64> {
        let l = &self.layout;
        let mut counts = [0u8; 16];
        for i in 0..l.n {
            let record = (s.0 >> (2 * i)) & 3
                | ((s.0 >> (l.tm_prepared as usize + i)) & 1) << 2
                | ((s.0 >> (l.msg_prepared as usize + i)) & 1) << 3;
            counts[record as usize] += 1;
        }
        let rest = s.0 >> l.tm_state;
        Some(mcheck_checker::cache::fingerprint(&(
            u128::from_le_bytes(std::array::from_fn(|k| counts[k])),
            rest,
        )))
    }

    fn groups(&self) -> Vec<String> {
        vec![format!("rm1..rm{} (the resource managers)", self.layout.n)]
    }
}

/// The spec's actions, by actor, and its two reachability properties.
impl Covers<PackedState> for PackedProgram {
    fn cover_step(&self, s: &PackedState, actor: ActorId, alt: u32, out: &mut Vec<Hit>) {
        if let Some(action) = self.action(s, actor, alt) {
            out.push(Hit::new(
                Traces::actor_name(self, s, actor),
                action.to_string(),
                How::Ran,
            ));
        }
    }

    fn coverage_space(&self) -> Vec<Hit> {
        let n = self.layout.n;
        let mut tm: Vec<Action> = (0..n).map(Action::TmRcvPrepared).collect();
        tm.extend([Action::TmCommit, Action::TmAbort]);
        if self.rounds > 1 {
            tm.push(Action::TmNextRound);
        }
        let mut hits: Vec<Hit> = tm.iter().map(|a| Hit::new("tm", a.to_string(), How::Ran)).collect();
        for i in 0..n {
            let rm = [
                Action::RmPrepare(i),
                Action::RmChooseToAbort(i),
                Action::RmRcvCommitMsg(i),
                Action::RmRcvAbortMsg(i),
            ];
            hits.extend(
                rm.iter()
                    .map(|a| Hit::new(format!("rm{}", i + 1), a.to_string(), How::Ran)),
            );
        }
        hits
    }

    fn sometimes(&self) -> Vec<&'static str> {
        vec!["all-committed", "all-aborted"]
    }

    fn holds(&self, s: &PackedState, property: usize) -> bool {
        let want = match property {
            0 => RmState::Committed,
            1 => RmState::Aborted,
            _ => return false,
        };
        (0..self.layout.n).all(|i| s.rm(i) == want)
    }
}

/// The packed TwoPhase model (`mcheck run twophase-packed`).
#[derive(Clone, Copy, Debug, Default)]
pub struct TwoPhasePacked;

impl Model for TwoPhasePacked {
    type Program = PackedProgram;

    fn info(&self) -> ModelInfo {
        ModelInfo::new(
            "twophase-packed",
            "twophase packed into one u64 (the speed benchmark): the same states, transitions and bug, \
                and a rounds parameter that runs transactions one after the other",
        )
        .params(PARAMS)
        .bugs(Bug::specs())
    }

    fn build(&self, params: &Params, bug: Option<u32>) -> PackedProgram {
        let p = self.effective_params(params, bug);
        PackedProgram::with_rounds(p.usize("rms"), p.get("rounds"), Bug::from_build(bug))
    }

    /// `rounds` is 1 above [`MAX_RMS_WITH_ROUNDS`] resource managers (their
    /// state leaves no bits for the round counter).
    fn effective_params(&self, params: &Params, _bug: Option<u32>) -> Params {
        let mut p = params.clone();
        if p.usize("rms") > MAX_RMS_WITH_ROUNDS {
            p.set("rounds", 1);
        }
        p
    }
}

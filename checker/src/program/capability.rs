//! The optional capabilities of a program (ARCHITECTURE.md, "Programs and capabilities"): each a
//! small trait that a program offers through one accessor of [`Program`]
//! ([`Program::liveness`], [`Program::symmetry`], [`Program::coverage`]),
//! asked for only by a run that uses it, and [`ProgramExt`], which asks
//! them on the checker's behalf with the defaults of a program that lacks
//! one.

use super::hit::{Hit, How};
use super::{ActorId, Event, Program, StateView, StepTrace, Violation, ViolationKind};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A program's liveness monitors (ARCHITECTURE.md, "Liveness"), the
/// capability that [`Program::liveness`] offers: a state is **hot** when
/// some monitor is owed something (a request waits for its answer, a
/// crashed server waits for repair), **cold** otherwise. Liveness checking
/// reports a fair cycle of hot states and a terminal hot state; sampled
/// executions report a long hot streak as a possible violation.
///
/// # Contract
///
/// Both methods are pure functions of the state, and `owed(s)` is `Some`
/// exactly when `hot(s)` is true.
pub trait Monitors<S>: Sync {
    /// Whether some monitor is hot in `s`. It runs after every step of a
    /// sampled execution with liveness on and at every state of the
    /// liveness graph: decide, do not describe (no formatting here).
    fn hot(&self, s: &S) -> bool;

    /// The hot monitor of `s` and what it is owed, in words; `None` when
    /// `s` is cold. Asked only where a report needs the words.
    fn owed(&self, s: &S) -> Option<Hot>;
}

/// What a hot state owes (see [`Monitors`]): the monitor that is hot and,
/// in words, what it waits for.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct Hot {
    /// The hot monitor (or property) by name.
    pub monitor: String,
    /// What is owed (`"client0's request 3 is not answered"`).
    pub owed: String,
}

impl Hot {
    /// The liveness violation of `kind` that this hot monitor makes.
    pub fn violation(&self, kind: ViolationKind, message: String) -> Violation {
        Violation::new(kind, self.monitor.clone(), message)
    }
}

/// A program's symmetry (ARCHITECTURE.md, "Symmetry"), the capability
/// that [`Program::symmetry`] offers: the exhaustive searches store the
/// fingerprint of a state's **orbit** in their cache instead of the
/// state's own when symmetry is on ([`crate::Config::symmetry`]); they
/// still execute the state itself.
///
/// # Contract
///
/// A symmetry is a set G of bijections of the states (renamings of
/// interchangeable actors) such that, for every g in G:
///
/// * the transition relation commutes with g: s -> t by some choice iff
///   g(s) -> g(t) by some choice (of the renamed actor), and g(s0) is in
///   s0's orbit;
/// * violations, monitors and invariants are invariant under g: s violates
///   iff g(s) does (the kind of violation may name another actor), and so
///   does the deadlock check.
///
/// Then `canonical_fingerprint(s) == canonical_fingerprint(g(s))` must hold
/// for every g (the same value for the whole orbit), and two states in
/// different orbits must get different values (up to fingerprint
/// collisions): **exact**, one state per orbit. `None` for a state means
/// that no symmetry applies to it (its own fingerprint is its orbit's).
pub trait Symmetry<S>: Sync {
    /// The fingerprint of `s`'s orbit, or `None` when no symmetry applies
    /// to `s`.
    fn canonical_fingerprint(&self, s: &S) -> Option<u64>;

    /// Check the declaration at `s`: apply a permutation drawn from `seed`
    /// and compare what the contract says is invariant. Called with
    /// `--symmetry` at a sample of the states (`crate::orbits`); an error
    /// stops the search. Default: nothing to check (the machine runtime
    /// checks its groups).
    fn check(&self, _s: &S, _seed: u64) -> Result<(), SymmetryMismatch> {
        Ok(())
    }

    /// The declared groups of interchangeable actors, for people (`mcheck
    /// list`): one line each, such as `"rm1..rm3 (resource managers)"`.
    fn groups(&self) -> Vec<String>;
}

/// What a program's steps and states exercise (ARCHITECTURE.md,
/// "Coverage and reachability"), and its reachability properties: the
/// capability that [`Program::coverage`] offers. Every method is a pure
/// function of its arguments.
pub trait Covers<S>: Sync {
    /// Push onto `out` what the step of `actor` with alternative `alt` at
    /// `s` exercises; called before the step executes, only when coverage
    /// is counted. The machine runtime names the machine kind, the message
    /// kind and whether it was handled, deferred, ignored, dropped or
    /// unhandled.
    fn cover_step(&self, s: &S, actor: ActorId, alt: u32, out: &mut Vec<Hit>);

    /// Push onto `out` what a state the search reached exercises (the
    /// machine runtime: its monitors' states). Default: nothing.
    fn cover_state(&self, _s: &S, _out: &mut Vec<Hit>) {}

    /// Coverage entries listed even when a search never hits them (the
    /// handlers a model declares): a zero there is the finding. Default:
    /// none.
    fn coverage_space(&self) -> Vec<Hit> {
        Vec::new()
    }

    /// The names of the reachability properties ("sometimes"): conditions
    /// that must hold in at least one reachable state. Default: none.
    fn sometimes(&self) -> Vec<&'static str> {
        Vec::new()
    }

    /// Whether reachability property `property` (an index into
    /// [`Covers::sometimes`]) holds in `s`. Default: false.
    fn holds(&self, _s: &S, _property: usize) -> bool {
        false
    }
}

/// Names, step descriptions and views for people (traces, diagrams,
/// counterexample pages): the capability that [`Program::traces`] offers.
/// Only replay and the reports ask for it; the searches never do.
pub trait Traces<S>: Sync {
    /// The name of `actor` in `s`.
    fn actor_name(&self, s: &S, actor: ActorId) -> String;

    /// Execute the step of `actor` with alternative `alt` on `s` as
    /// [`Program::execute`] does, and describe it in `trace` (whose
    /// `step`, `actor`, `actor_name`, `alternative` and `alternatives` the
    /// caller has filled): the event handled, the states before and after,
    /// what was sent, created, chosen and announced. Replay calls it on a
    /// copy of the state, for the description only: the step it records
    /// is [`Program::execute`]'s, so a wrapper program that changes steps
    /// need not describe them.
    fn execute_traced(
        &self,
        s: &mut S,
        actor: ActorId,
        alt: u32,
        events: &mut Vec<Event>,
        trace: &mut StepTrace,
    ) -> Result<(), Violation>;

    /// A view of `s`: each actor's state and inbox, and the monitors.
    /// Default: `None`, and then counterexample pages show the `Debug` of
    /// the whole state.
    fn view(&self, _s: &S) -> Option<StateView> {
        None
    }
}

/// The checker's questions to a program's capabilities, answered with the
/// defaults of a program that lacks the capability (implemented for every
/// [`Program`]; a program implements the capability traits instead).
pub trait ProgramExt: Program {
    /// [`Traces::actor_name`]; without traces, the name
    /// [`Program::actors`] gives (`actor<id>` if it lists none).
    fn actor_name(&self, s: &Self::State, actor: ActorId) -> String {
        if let Some(t) = self.traces() {
            return t.actor_name(s, actor);
        }
        self.actors(s)
            .into_iter()
            .find(|a| a.id == actor)
            .map(|a| a.name)
            .unwrap_or_else(|| format!("actor{}", actor.0))
    }

    /// [`Program::execute`], with the step described in `trace` by
    /// [`Traces::execute_traced`] on a copy of `s` when the program has
    /// traces.
    fn execute_traced(
        &self,
        s: &mut Self::State,
        actor: ActorId,
        alt: u32,
        events: &mut Vec<Event>,
        trace: &mut StepTrace,
    ) -> Result<(), Violation> {
        self.describe(s, actor, alt, trace);
        self.execute(s, actor, alt, events)
    }

    /// The step of `actor` with `alt` at `s` described in `trace` by
    /// [`Traces::execute_traced`] on a copy of `s`, when the program has
    /// traces; nothing otherwise.
    fn describe(&self, s: &Self::State, actor: ActorId, alt: u32, trace: &mut StepTrace) {
        if let Some(t) = self.traces() {
            let _ = t.execute_traced(&mut s.clone(), actor, alt, &mut Vec::new(), trace);
        }
    }

    /// [`Traces::view`]; `None` without traces.
    fn view(&self, s: &Self::State) -> Option<StateView> {
        self.traces()?.view(s)
    }

    /// Its orbit's fingerprint ([`Symmetry::canonical_fingerprint`]);
    /// `None` without a symmetry.
    #[inline]
    fn canonical_fingerprint(&self, s: &Self::State) -> Option<u64> {
        self.symmetry()?.canonical_fingerprint(s)
    }

    /// [`Symmetry::check`]; nothing to check without a symmetry.
    fn check_symmetry(&self, s: &Self::State, seed: u64) -> Result<(), SymmetryMismatch> {
        self.symmetry().map_or(Ok(()), |y| y.check(s, seed))
    }

    /// [`Symmetry::groups`]; empty without a symmetry.
    fn symmetry_groups(&self) -> Vec<String> {
        self.symmetry().map_or_else(Vec::new, |y| y.groups())
    }

    /// [`Covers::cover_step`]; without coverage, the actor's name and the
    /// alternative ([`How::Ran`]).
    fn cover_step(&self, s: &Self::State, actor: ActorId, alt: u32, out: &mut Vec<Hit>) {
        match self.coverage() {
            Some(c) => c.cover_step(s, actor, alt, out),
            None => out.push(Hit::new(
                self.actor_name(s, actor),
                format!("alternative {alt}"),
                How::Ran,
            )),
        }
    }

    /// [`Covers::cover_state`]; nothing without coverage.
    fn cover_state(&self, s: &Self::State, out: &mut Vec<Hit>) {
        if let Some(c) = self.coverage() {
            c.cover_state(s, out)
        }
    }

    /// [`Covers::coverage_space`]; empty without coverage.
    fn coverage_space(&self) -> Vec<Hit> {
        self.coverage().map_or_else(Vec::new, |c| c.coverage_space())
    }

    /// [`Covers::sometimes`]; none without coverage.
    fn sometimes(&self) -> Vec<&'static str> {
        self.coverage().map_or_else(Vec::new, |c| c.sometimes())
    }

    /// [`Covers::holds`]; false without coverage.
    fn holds(&self, s: &Self::State, property: usize) -> bool {
        self.coverage().is_some_and(|c| c.holds(s, property))
    }
}

impl<P: Program + ?Sized> ProgramExt for P {}

/// A symmetry declaration that the program does not keep: `what` differs
/// between a state and its image under a permutation of `group`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymmetryMismatch {
    /// The group's members, by name.
    pub group: String,
    /// The permutation, as the machines it moves (`"rm1 -> rm2, rm2 ->
    /// rm1"`), or the two states compared by the generic check.
    pub permutation: String,
    /// What differed, in words.
    pub what: String,
}

impl fmt::Display for SymmetryMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the symmetry declaration does not hold: group [{}], permuted by {}: {} differs; fix the model's symmetry (or rename) or run without --symmetry",
            self.group, self.permutation, self.what
        )
    }
}

impl std::error::Error for SymmetryMismatch {}

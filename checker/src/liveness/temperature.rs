//! Monitor temperature for the sampling strategies (ARCHITECTURE.md,
//! "Liveness"): [`Temperature`] wraps a program and counts, along each
//! execution, its steps and the consecutive steps that ended hot; the step
//! that reaches the step limit with more than the threshold of them is a
//! *possible* liveness violation (as Coyote's liveness temperature); a
//! terminal state that is hot is a certain one (the monitor stays hot for
//! ever: the exhaustive check's terminal case), reported at that state as
//! a deadlock is. Every sampling strategy runs on the wrapper unchanged.

use crate::coverage::Hit;
use crate::program::{
    ActorId, ActorInfo, Covers, Enabled, Event, Hot, Monitors, Program, ProgramExt, StateView, StepTrace, Symmetry,
    SymmetryMismatch, Traces, Violation, ViolationKind,
};
use crate::watch::{Watch, Watched};
use std::hash::{Hash, Hasher};

/// A state of the wrapped program with the execution's counters. The
/// counters are bookkeeping of one execution, not part of what the state
/// is: equality and hashing look at the wrapped state only.
#[derive(Clone, Debug)]
pub struct Tempered<S> {
    /// The wrapped program's state.
    pub inner: S,
    /// Steps taken from the initial state.
    pub steps: u64,
    /// Consecutive steps, up to now, after which a monitor was hot.
    pub streak: u64,
}

impl<S: PartialEq> PartialEq for Tempered<S> {
    fn eq(&self, other: &Self) -> bool {
        self.inner == other.inner
    }
}

impl<S: Eq> Eq for Tempered<S> {}

impl<S: Hash> Hash for Tempered<S> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.inner.hash(h)
    }
}

/// `inner`, whose execution reaching `max_steps` steps with a monitor hot
/// for more than `threshold` consecutive steps violates
/// ([`ViolationKind::PossibleLiveness`]), and whose terminal hot states
/// violate ([`ViolationKind::Liveness`]).
///
/// A step asks only [`Monitors::hot`], which decides without describing;
/// the words of [`Monitors::owed`] are asked for once, by the violation.
/// The terminal states are judged by [`Program::deadlock`], which the
/// search asks at every terminal state when deadlock detection is on: so
/// the strategies run on this wrapper with deadlock detection on, and the
/// wrapper reports a real deadlock only when `deadlock` says the user
/// asked for it ([`crate::run::run`] and replay do both).
pub struct Temperature<'p, P: Program> {
    inner: Watched<'p, P>,
    monitors: Option<&'p dyn Monitors<P::State>>,
    max_steps: u64,
    threshold: u64,
    deadlock: bool,
}

impl<P: Program> std::fmt::Debug for Temperature<'_, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Temperature")
            .field("max_steps", &self.max_steps)
            .field("threshold", &self.threshold)
            .field("deadlock", &self.deadlock)
            .finish_non_exhaustive()
    }
}

impl<'p, P: Program> Temperature<'p, P> {
    /// Wrap `inner` (see the type's docs); `deadlock`: whether a terminal
    /// state that is cold and a deadlock of `inner` violates.
    pub fn new(inner: &'p P, max_steps: usize, threshold: u64, deadlock: bool) -> Self {
        Temperature::watched(Watched::bare(inner), max_steps, threshold, deadlock)
    }

    /// [`Temperature::new`] of a watched program: its steps are the
    /// watched program's, and the watch is told of the transitions,
    /// states and orbits that an exhaustive search of the temperature
    /// tells it of (hybrid's first phase, [`Watch`] on this type).
    pub fn watched(inner: Watched<'p, P>, max_steps: usize, threshold: u64, deadlock: bool) -> Self {
        Temperature {
            inner,
            monitors: inner.program().liveness(),
            max_steps: max_steps as u64,
            threshold,
            deadlock,
        }
    }

    /// Whether a monitor is hot in `s`.
    #[inline(always)]
    fn hot(&self, s: &P::State) -> bool {
        self.monitors.is_some_and(|m| m.hot(s))
    }

    /// The liveness violation of `kind` at hot state `s`, with the message
    /// `message` makes of what is owed.
    #[cold]
    fn violation(&self, s: &P::State, kind: ViolationKind, message: impl FnOnce(&Hot) -> String) -> Violation {
        let hot = self.monitors.and_then(|m| m.owed(s)).unwrap_or_else(|| Hot {
            monitor: "liveness".into(),
            owed: "a monitor is hot (Monitors::owed said nothing: a bug of the model)".into(),
        });
        hot.violation(kind, message(&hot))
    }

    /// Count the step just taken; the violation when it reaches the limit
    /// too hot.
    #[inline(always)]
    fn count(&self, s: &mut Tempered<P::State>) -> Result<(), Violation> {
        s.steps += 1;
        s.streak = if self.hot(&s.inner) { s.streak + 1 } else { 0 };
        if s.steps == self.max_steps && s.streak > 0 {
            return self.at_limit(s);
        }
        Ok(())
    }

    /// The last step's verdict, hot: certain when nothing can run (the
    /// search stops at the limit without asking [`Program::deadlock`]),
    /// possible when the streak is above the threshold.
    #[cold]
    fn at_limit(&self, s: &Tempered<P::State>) -> Result<(), Violation> {
        let mut en = Vec::new();
        self.inner.enabled(&s.inner, &mut en);
        if en.is_empty() {
            return Err(self.violation(&s.inner, ViolationKind::Liveness, |hot| super::lasso::message(hot, 0)));
        }
        if s.streak <= self.threshold {
            return Ok(());
        }
        Err(self.violation(&s.inner, ViolationKind::PossibleLiveness, |hot| {
            format!(
                "the execution reached max-steps {} with the monitor hot for its last {} steps: {}",
                self.max_steps, s.streak, hot.owed
            )
        }))
    }
}

impl<P: Program> Program for Temperature<'_, P> {
    type State = Tempered<P::State>;
    fn initial(&self) -> Self::State {
        Tempered {
            inner: self.inner.initial(),
            steps: 0,
            streak: 0,
        }
    }
    fn actors(&self, s: &Self::State) -> Vec<ActorInfo> {
        self.inner.actors(&s.inner)
    }
    fn enabled(&self, s: &Self::State, out: &mut Vec<Enabled>) {
        self.inner.enabled(&s.inner, out)
    }
    fn execute(&self, s: &mut Self::State, actor: ActorId, alt: u32, events: &mut Vec<Event>) -> Result<(), Violation> {
        self.inner.execute(&mut s.inner, actor, alt, events)?;
        self.count(s)
    }
    /// A terminal state: hot, a liveness violation; cold, a deadlock of
    /// the wrapped program's when deadlocks count.
    fn deadlock(&self, s: &Self::State) -> Option<Violation> {
        if self.hot(&s.inner) {
            return Some(self.violation(&s.inner, ViolationKind::Liveness, |hot| super::lasso::message(hot, 0)));
        }
        self.deadlock.then(|| self.inner.deadlock(&s.inner)).flatten()
    }
    fn symmetry(&self) -> Option<&dyn Symmetry<Self::State>> {
        self.inner.symmetry().map(|_| self as &dyn Symmetry<Self::State>)
    }
    fn coverage(&self) -> Option<&dyn Covers<Self::State>> {
        self.inner.coverage().map(|_| self as &dyn Covers<Self::State>)
    }
    fn traces(&self) -> Option<&dyn Traces<Self::State>> {
        self.inner.traces().map(|_| self as &dyn Traces<Self::State>)
    }
}

/// The wrapped program's watch, told of an exhaustive search's
/// transitions and states on the wrapped part of the state (the steps
/// themselves tell it through [`Watched::execute`]).
impl<P: Program> Watch<Tempered<P::State>> for Temperature<'_, P> {
    fn transition(&self, s: &Tempered<P::State>, actor: ActorId, alt: u32) {
        self.inner.count_transition(&s.inner, actor, alt)
    }
    fn state(&self, s: &Tempered<P::State>) {
        self.inner.count_state(&s.inner)
    }
    fn keyed(&self, s: &Tempered<P::State>, canonical: u64) {
        if let Some(w) = self.inner.watch() {
            w.keyed(&s.inner, canonical)
        }
    }
}

/// The wrapped program's symmetry, on its part of the state (hybrid runs
/// its exhaustive phase on the wrapper).
impl<P: Program> Symmetry<Tempered<P::State>> for Temperature<'_, P> {
    fn canonical_fingerprint(&self, s: &Tempered<P::State>) -> Option<u64> {
        self.inner.canonical_fingerprint(&s.inner)
    }
    fn check(&self, s: &Tempered<P::State>, seed: u64) -> Result<(), SymmetryMismatch> {
        self.inner.check_symmetry(&s.inner, seed)
    }
    fn groups(&self) -> Vec<String> {
        self.inner.symmetry_groups()
    }
}

/// The wrapped program's coverage, on its part of the state.
impl<P: Program> Covers<Tempered<P::State>> for Temperature<'_, P> {
    fn cover_step(&self, s: &Tempered<P::State>, actor: ActorId, alt: u32, out: &mut Vec<Hit>) {
        self.inner.cover_step(&s.inner, actor, alt, out)
    }
    fn cover_state(&self, s: &Tempered<P::State>, out: &mut Vec<Hit>) {
        self.inner.cover_state(&s.inner, out)
    }
    fn coverage_space(&self) -> Vec<Hit> {
        self.inner.coverage_space()
    }
    fn sometimes(&self) -> Vec<&'static str> {
        self.inner.sometimes()
    }
    fn holds(&self, s: &Tempered<P::State>, property: usize) -> bool {
        self.inner.holds(&s.inner, property)
    }
}

/// The wrapped program's names and views, on its part of the state.
impl<P: Program> Traces<Tempered<P::State>> for Temperature<'_, P> {
    fn actor_name(&self, s: &Tempered<P::State>, actor: ActorId) -> String {
        self.inner.actor_name(&s.inner, actor)
    }
    fn execute_traced(
        &self,
        s: &mut Tempered<P::State>,
        actor: ActorId,
        alt: u32,
        events: &mut Vec<Event>,
        trace: &mut StepTrace,
    ) -> Result<(), Violation> {
        self.inner
            .program()
            .execute_traced(&mut s.inner, actor, alt, events, trace)
    }
    fn view(&self, s: &Tempered<P::State>) -> Option<StateView> {
        self.inner.view(&s.inner)
    }
}

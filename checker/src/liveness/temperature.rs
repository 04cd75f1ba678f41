//! Monitor temperature for the sampling strategies (ARCHITECTURE.md §5,
//! "Liveness"): [`Temperature`] wraps a program and counts, along each
//! execution, its steps and the consecutive steps that ended hot; the step
//! that reaches the step limit with more than the threshold of them is a
//! *possible* liveness violation (as Coyote's liveness temperature); a step
//! after which nothing can run while a monitor is hot is a certain one (the
//! monitor stays hot for ever: the exhaustive check's terminal case). Every
//! sampling strategy runs on the wrapper unchanged.

use crate::program::{ActorId, ActorInfo, Enabled, Event, Program, StateView, StepTrace, Violation, ViolationKind};
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
/// ([`ViolationKind::PossibleLiveness`]).
#[derive(Debug)]
pub struct Temperature<'p, P> {
    inner: &'p P,
    max_steps: u64,
    threshold: u64,
}

impl<'p, P: Program> Temperature<'p, P> {
    /// Wrap `inner` (see the type's docs).
    pub fn new(inner: &'p P, max_steps: usize, threshold: u64) -> Self {
        Temperature {
            inner,
            max_steps: max_steps as u64,
            threshold,
        }
    }

    /// Count the step just taken; the violation when it ends the execution
    /// hot, or reaches the limit too hot.
    fn count(&self, s: &mut Tempered<P::State>) -> Result<(), Violation> {
        s.steps += 1;
        let hot = self.inner.hot(&s.inner);
        s.streak = if hot.is_some() { s.streak + 1 } else { 0 };
        let Some(hot) = hot else {
            return Ok(());
        };
        if self.ends(&s.inner) {
            return Err(hot.violation(ViolationKind::Liveness, super::lasso::message(&hot, 0)));
        }
        if s.steps == self.max_steps && s.streak > self.threshold {
            let message = format!(
                "the execution reached max-steps {} with the monitor hot for its last {} steps: {}",
                self.max_steps, s.streak, hot.owed
            );
            return Err(hot.violation(ViolationKind::PossibleLiveness, message));
        }
        Ok(())
    }

    /// Whether nothing can run in `s` (asked only in hot states).
    fn ends(&self, s: &P::State) -> bool {
        let mut en = Vec::new();
        self.inner.enabled(s, &mut en);
        en.is_empty()
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
    fn deadlock(&self, s: &Self::State) -> Option<Violation> {
        self.inner.deadlock(&s.inner)
    }
    fn actor_name(&self, s: &Self::State, actor: ActorId) -> String {
        self.inner.actor_name(&s.inner, actor)
    }
    fn execute_traced(
        &self,
        s: &mut Self::State,
        actor: ActorId,
        alt: u32,
        events: &mut Vec<Event>,
        trace: &mut StepTrace,
    ) -> Result<(), Violation> {
        self.inner.execute_traced(&mut s.inner, actor, alt, events, trace)?;
        self.count(s)
    }
    fn view(&self, s: &Self::State) -> Option<StateView> {
        self.inner.view(&s.inner)
    }
    fn hot(&self, s: &Self::State) -> Option<crate::program::Hot> {
        self.inner.hot(&s.inner)
    }
    fn has_liveness(&self) -> bool {
        self.inner.has_liveness()
    }
    fn canonical_fingerprint(&self, s: &Self::State) -> Option<u64> {
        self.inner.canonical_fingerprint(&s.inner)
    }
    fn check_symmetry(&self, s: &Self::State, seed: u64) -> Result<(), crate::orbits::SymmetryMismatch> {
        self.inner.check_symmetry(&s.inner, seed)
    }
    fn symmetry_groups(&self) -> Vec<String> {
        self.inner.symmetry_groups()
    }
    fn cover_step(&self, s: &Self::State, actor: ActorId, alt: u32, out: &mut Vec<crate::coverage::Hit>) {
        self.inner.cover_step(&s.inner, actor, alt, out)
    }
    fn cover_state(&self, s: &Self::State, out: &mut Vec<crate::coverage::Hit>) {
        self.inner.cover_state(&s.inner, out)
    }
    fn coverage_space(&self) -> Vec<crate::coverage::Hit> {
        self.inner.coverage_space()
    }
    fn count_transition(&self, s: &Self::State, actor: ActorId, alt: u32) {
        self.inner.count_transition(&s.inner, actor, alt)
    }
    fn count_state(&self, s: &Self::State) {
        self.inner.count_state(&s.inner)
    }
    fn sometimes(&self) -> Vec<&'static str> {
        self.inner.sometimes()
    }
    fn holds(&self, s: &Self::State, property: usize) -> bool {
        self.inner.holds(&s.inner, property)
    }
}

//! What a run watches beside the program: coverage counts, a reachability
//! property, the check of a symmetry declaration, the states a liveness
//! replay records. A [`Watch`] is told of the steps a search or a replay
//! takes; it never changes what the program does, but it may end an
//! execution with a violation of its own (a reached property, a broken
//! declaration).
//!
//! The searches and replay run on [`Watched`], a program with an optional
//! watch: without one, a step costs one predictable branch more than the
//! program's own `execute`, and the searches are instantiated once per
//! program type whatever a run watches.

use crate::cache::{keyed_fingerprint, state_fingerprint};
use crate::program::{ActorId, Event, Program, ProgramExt, StepTrace, Violation};
use std::ops::Deref;

/// Told of what a search or a replay does (every method defaults to
/// nothing). Implementations are shared by the threads of a parallel
/// search, hence `Sync`.
///
/// Contract: the exhaustive searches (SES, DFS, PB, on any number of
/// threads) call [`Watch::transition`] once for each transition they take
/// and [`Watch::state`] once for each state they count, however often
/// their look-aheads and probes execute a step again; every search and
/// replay calls [`Watch::before`] and [`Watch::after`] around every step
/// it executes, and [`Watch::keyed`] whenever it keys a state by its
/// canonical fingerprint.
pub trait Watch<S>: Sync {
    /// The exhaustive search takes the step of `actor` with alternative
    /// `alt` at `s`, once: before it executes, or when its successor is
    /// found cached without executing it (a frontier entry retired with
    /// its choices left counts each of them).
    fn transition(&self, _s: &S, _actor: ActorId, _alt: u32) {}

    /// The exhaustive search counts `s` as a new state (the initial state
    /// included), once.
    fn state(&self, _s: &S) {}

    /// A step of `actor` with alternative `alt` is about to execute at `s`.
    fn before(&self, _s: &S, _actor: ActorId, _alt: u32) {}

    /// The step just executed reached `s` with `result` (the program's
    /// verdict): the step's verdict, which the watch may turn into a
    /// violation of its own.
    fn after(&self, _s: &S, result: Result<(), Violation>) -> Result<(), Violation> {
        result
    }

    /// The search keys `s` by its orbit's fingerprint `canonical`.
    fn keyed(&self, _s: &S, _canonical: u64) {}
}

/// Two watches, told in turn (`after` passes the first one's verdict to
/// the second).
pub(crate) struct Both<'a, S>(pub(crate) &'a dyn Watch<S>, pub(crate) &'a dyn Watch<S>);

impl<S> Watch<S> for Both<'_, S> {
    fn transition(&self, s: &S, actor: ActorId, alt: u32) {
        self.0.transition(s, actor, alt);
        self.1.transition(s, actor, alt);
    }
    fn state(&self, s: &S) {
        self.0.state(s);
        self.1.state(s);
    }
    fn before(&self, s: &S, actor: ActorId, alt: u32) {
        self.0.before(s, actor, alt);
        self.1.before(s, actor, alt);
    }
    fn after(&self, s: &S, result: Result<(), Violation>) -> Result<(), Violation> {
        self.1.after(s, self.0.after(s, result))
    }
    fn keyed(&self, s: &S, canonical: u64) {
        self.0.keyed(s, canonical);
        self.1.keyed(s, canonical);
    }
}

/// A program as a run takes its steps: with the run's watch, if any. It
/// dereferences to the program for everything the watch is not told of.
pub struct Watched<'a, P: Program> {
    program: &'a P,
    watch: Option<&'a dyn Watch<P::State>>,
}

impl<P: Program> std::fmt::Debug for Watched<'_, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watched")
            .field("watched", &self.watch.is_some())
            .finish_non_exhaustive()
    }
}

impl<P: Program> Clone for Watched<'_, P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P: Program> Copy for Watched<'_, P> {}

impl<P: Program> Deref for Watched<'_, P> {
    type Target = P;
    fn deref(&self) -> &P {
        self.program
    }
}

impl<'a, P: Program> Watched<'a, P> {
    /// `program` watched by `watch`.
    pub fn new(program: &'a P, watch: Option<&'a dyn Watch<P::State>>) -> Self {
        Watched { program, watch }
    }

    /// `program` with nothing watching.
    pub fn bare(program: &'a P) -> Self {
        Watched { program, watch: None }
    }

    /// The program itself.
    pub fn program(&self) -> &'a P {
        self.program
    }

    /// The watch, if any.
    pub fn watch(&self) -> Option<&'a dyn Watch<P::State>> {
        self.watch
    }

    /// [`Program::execute`], the watch told before and after.
    #[inline(always)]
    pub fn execute(
        &self,
        s: &mut P::State,
        actor: ActorId,
        alt: u32,
        events: &mut Vec<Event>,
    ) -> Result<(), Violation> {
        match self.watch {
            None => self.program.execute(s, actor, alt, events),
            Some(w) => watched_execute(self.program, w, s, actor, alt, events),
        }
    }

    /// [`Watched::execute`], the step described in `trace` first
    /// ([`ProgramExt::describe`]).
    pub fn execute_traced(
        &self,
        s: &mut P::State,
        actor: ActorId,
        alt: u32,
        events: &mut Vec<Event>,
        trace: &mut StepTrace,
    ) -> Result<(), Violation> {
        self.program.describe(s, actor, alt, trace);
        self.execute(s, actor, alt, events)
    }

    /// [`Watch::transition`], for the exhaustive searches.
    #[inline(always)]
    pub fn count_transition(&self, s: &P::State, actor: ActorId, alt: u32) {
        if let Some(w) = self.watch {
            w.transition(s, actor, alt)
        }
    }

    /// [`Watch::state`], for the exhaustive searches.
    #[inline(always)]
    pub fn count_state(&self, s: &P::State) {
        if let Some(w) = self.watch {
            w.state(s)
        }
    }

    /// The fingerprint the exhaustive searches cache `s` by
    /// ([`state_fingerprint`]), the watch told of the orbit's.
    #[inline(always)]
    pub fn fingerprint(&self, s: &P::State, symmetry: bool) -> u64 {
        match self.watch {
            Some(w) if symmetry => watched_fingerprint(self.program, w, s),
            _ => state_fingerprint(self.program, s, symmetry),
        }
    }
}

/// [`Watched::fingerprint`] with a watch and symmetry, out of line so that
/// the search's inlined look-aheads do not grow by it.
#[inline(never)]
fn watched_fingerprint<P: Program>(program: &P, w: &dyn Watch<P::State>, s: &P::State) -> u64 {
    keyed_fingerprint(program, s, true, |fp| w.keyed(s, fp))
}

/// [`Watched::execute`] with a watch, out of line so that a run without
/// one pays a branch.
#[inline(never)]
fn watched_execute<P: Program>(
    program: &P,
    w: &dyn Watch<P::State>,
    s: &mut P::State,
    actor: ActorId,
    alt: u32,
    events: &mut Vec<Event>,
) -> Result<(), Violation> {
    w.before(s, actor, alt);
    let result = program.execute(s, actor, alt, events);
    w.after(s, result)
}

/// [`Watched`] for a search instantiated knowing whether a watch is there
/// (`ON`): without one (`ON` false) every call is the program's own, with
/// no test of the watch at all, so that the optimised search's hot loops
/// cost what they cost before watches existed; with one it is
/// [`Watched`]'s, which tests for the watch and runs without one too. The
/// optimised search is instantiated both ways in release builds and picks at
/// its start (`Watching::new`'s caller matches on [`Watched::watch`]);
/// builds with debug assertions (the tests') instantiate it with `ON` only,
/// one search per program type and order: that halves the search's share of
/// the test build, and the two instances differ only in this type's calls.
pub(crate) struct Watching<'a, P: Program, const ON: bool>(Watched<'a, P>);

impl<P: Program, const ON: bool> Clone for Watching<'_, P, ON> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P: Program, const ON: bool> Copy for Watching<'_, P, ON> {}

impl<P: Program, const ON: bool> std::fmt::Debug for Watching<'_, P, ON> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl<P: Program, const ON: bool> Deref for Watching<'_, P, ON> {
    type Target = P;
    fn deref(&self) -> &P {
        self.0.program
    }
}

impl<'a, P: Program, const ON: bool> Watching<'a, P, ON> {
    /// `program`, which has no watch unless `ON`.
    pub(crate) fn new(program: Watched<'a, P>) -> Self {
        debug_assert!(
            ON || program.watch.is_none(),
            "mcheck bug: a search instantiated without a watch has one"
        );
        Watching(program)
    }

    /// The program itself.
    pub(crate) fn program(&self) -> &'a P {
        self.0.program
    }

    /// [`Watched::execute`].
    #[inline(always)]
    pub(crate) fn execute(
        &self,
        s: &mut P::State,
        actor: ActorId,
        alt: u32,
        events: &mut Vec<Event>,
    ) -> Result<(), Violation> {
        match ON {
            true => self.0.execute(s, actor, alt, events),
            false => self.0.program.execute(s, actor, alt, events),
        }
    }

    /// [`Watched::count_transition`].
    #[inline(always)]
    pub(crate) fn count_transition(&self, s: &P::State, actor: ActorId, alt: u32) {
        if ON {
            self.0.count_transition(s, actor, alt)
        }
    }

    /// [`Watched::count_state`].
    #[inline(always)]
    pub(crate) fn count_state(&self, s: &P::State) {
        if ON {
            self.0.count_state(s)
        }
    }

    /// [`Watched::fingerprint`].
    #[inline(always)]
    pub(crate) fn fingerprint(&self, s: &P::State, symmetry: bool) -> u64 {
        match ON {
            true => self.0.fingerprint(s, symmetry),
            false => state_fingerprint(self.0.program, s, symmetry),
        }
    }
}

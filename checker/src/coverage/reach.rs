//! Searching for a reachability property (ARCHITECTURE.md §6, "Coverage
//! and reachability"): [`Reach`] wraps a program so that a state where the
//! property holds ends the execution as a violation of its own, which
//! every strategy already reports with a schedule that replays to it.

use super::forward::forward_program;
use crate::program::{ActorId, Event, Program, StepTrace, Violation, ViolationKind};

/// The machine name of the violation that marks a reached property.
pub const SOMETIMES: &str = "sometimes";

/// A program whose executions end, as a violation ([`reached`]), at the
/// first state where reachability property `property` holds.
pub struct Reach<'p, P: Program> {
    program: &'p P,
    property: usize,
    name: &'static str,
}

impl<P: Program> std::fmt::Debug for Reach<'_, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reach")
            .field("property", &self.name)
            .finish_non_exhaustive()
    }
}

/// The violation that marks reaching property `name`.
pub fn reached(name: &str) -> Violation {
    Violation::new(ViolationKind::Assertion, SOMETIMES, format!("property {name} reached"))
}

/// The property that `v` marks as reached, if it is such a mark.
pub fn reached_property(v: &Violation) -> Option<&str> {
    if v.kind != ViolationKind::Assertion || v.machine.as_deref() != Some(SOMETIMES) {
        return None;
    }
    v.message.strip_prefix("property ")?.strip_suffix(" reached")
}

impl<'p, P: Program> Reach<'p, P> {
    /// Search `program` for property `property` (an index into
    /// [`Program::sometimes`]); `None` when it has no such property.
    pub fn new(program: &'p P, property: usize) -> Option<Self> {
        let name = *program.sometimes().get(property)?;
        Some(Reach {
            program,
            property,
            name,
        })
    }

    /// The wrapper for the property that `schedule_expects` marks as
    /// reached (a schedule made by a property's search), if any.
    pub fn for_expected(program: &'p P, schedule_expects: Option<&Violation>) -> Option<Self> {
        let name = reached_property(schedule_expects?)?;
        let property = program.sometimes().iter().position(|n| *n == name)?;
        Reach::new(program, property)
    }

    fn check(&self, s: &P::State, result: Result<(), Violation>) -> Result<(), Violation> {
        result?;
        if self.program.holds(s, self.property) {
            return Err(reached(self.name));
        }
        Ok(())
    }
}

impl<P: Program> Program for Reach<'_, P> {
    type State = P::State;

    forward_program!();

    fn execute(&self, s: &mut P::State, actor: ActorId, alt: u32, events: &mut Vec<Event>) -> Result<(), Violation> {
        let result = self.program.execute(s, actor, alt, events);
        self.check(s, result)
    }

    fn execute_traced(
        &self,
        s: &mut P::State,
        actor: ActorId,
        alt: u32,
        events: &mut Vec<Event>,
        trace: &mut StepTrace,
    ) -> Result<(), Violation> {
        let result = self.program.execute_traced(s, actor, alt, events, trace);
        self.check(s, result)
    }
}

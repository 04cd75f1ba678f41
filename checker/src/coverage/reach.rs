//! The mark of a reached reachability property: a search for a property
//! ([`super::Covered::reaching`]) ends an execution in a state where it
//! holds with a violation of its own, which every strategy already reports
//! with a schedule that replays to it.

use crate::program::{Violation, ViolationKind};

/// The machine name of the violation that marks a reached property.
pub const SOMETIMES: &str = "sometimes";

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

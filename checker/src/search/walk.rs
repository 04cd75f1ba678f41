//! One execution driven by a randomized scheduler, recorded as a choice
//! path: the engine of the baselines RS, IRS and PCT.

use super::batch::Sample;
use super::exec::{self, Driver, End};
use crate::program::{ActorId, Enabled, Event, Program};

/// Records the flat choice index of every step a driver takes.
struct Recording<'d, D> {
    inner: &'d mut D,
    path: Vec<u64>,
}

impl<D: Driver> Driver for Recording<'_, D> {
    fn choose(&mut self, step: usize, en: &[Enabled], ids: &[ActorId]) -> Result<Option<(ActorId, u32)>, String> {
        let c = self.inner.choose(step, en, ids)?;
        if let Some((actor, alt)) = c {
            self.path.push(exec::index_of(en, actor, alt));
        }
        Ok(c)
    }
    fn observe(&mut self, actor: ActorId, events: &[Event]) {
        self.inner.observe(actor, events)
    }
}

/// Run `program` once under `driver` for at most `max_steps` steps.
pub(super) fn run_one<P: Program, D: Driver>(program: &P, driver: &mut D, max_steps: usize, deadlock: bool) -> Sample {
    let mut rec = Recording {
        inner: driver,
        path: Vec::new(),
    };
    let ex = exec::execute(program, &mut rec, max_steps, deadlock, false);
    let steps = ex.steps as u64;
    Sample {
        steps,
        longest: steps,
        truncated: ex.end == End::MaxSteps,
        violation: ex.violation.map(|f| (f, rec.path)),
        explorer_seed: 0,
        aborted: false,
        complete: true,
    }
}

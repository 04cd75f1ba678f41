//! The run's report from every worker's summary (on process 0): the sums,
//! the strata, the outcome, and the counterexample as an ordinary delay
//! path, replayed here on one machine to fill in its violation.

use crate::Layout;
use crate::message::{Halt, Summary};
use mcheck_checker::config::Config;
use mcheck_checker::search::exec::{DelayDriver, delay_path, execute};
use mcheck_checker::{
    BoundedBy, CacheKey, Explorer, Outcome, PathKind, Program, Report, Schedule, SearchError, Stratum,
};

/// The report of a run whose workers reported `all`.
pub fn assemble<P: Program, E: Explorer>(
    program: &P,
    root: E,
    config: &Config,
    layout: &Layout,
    mut all: Vec<Summary>,
) -> Result<Report, SearchError> {
    all.sort_by_key(|s| s.worker);
    if let Some(e) = all.iter().find_map(|s| s.error.clone()) {
        return Err(SearchError::Internal(e));
    }
    let name = root.name().to_string();
    let mut r = Report::new("ses", Some(&name), config.seed, layout.workers());
    for s in &all {
        r.states += s.states;
        r.transitions += s.transitions;
        r.deferrals += s.deferrals;
        r.cache_bytes += s.cache_bytes;
        r.cache_full |= s.cache_full;
        for (bound, c) in s.strata.iter().enumerate() {
            if r.strata.len() <= bound {
                let mut stratum = Stratum::default();
                stratum.bound = bound as u32;
                r.strata.push(stratum);
            }
            let t = &mut r.strata[bound];
            t.new_states += c.new_states;
            t.transitions += c.transitions;
            t.deferrals += c.deferrals;
            t.frontier += c.deferrals;
            t.elapsed_s = t.elapsed_s.max(c.elapsed_s);
        }
    }
    r.steps = r.transitions;
    r.bound_reached = r.strata.len().saturating_sub(1) as u32;
    r.peak_frontier = r.strata.iter().map(|s| s.frontier).max().unwrap_or(0);
    r.cache_key = Some(CacheKey::ProgramState);
    r.symmetry = config.symmetry;
    let mut rss: Vec<(u32, u64)> = all.iter().map(|s| (s.process, s.peak_rss)).collect();
    rss.sort();
    rss.dedup_by_key(|p| p.0);
    let mb = |b: u64| b as f64 / f64::from(1 << 20);
    r.peak_memory_mb = rss.iter().map(|p| mb(p.1)).fold(0.0, f64::max);
    r.notes.push(format!(
        "distributed SES (timely dataflow): {} workers, {} per process in {} processes; peak memory per process: {}",
        layout.workers(),
        layout.threads,
        layout.processes,
        rss.iter()
            .map(|(p, b)| format!("process {p} {:.1} MiB", mb(*b)))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let (sent, unsent) = all.iter().fold((0, 0), |(a, b), s| (a + s.sent, b + s.unsent));
    r.notes.push(format!(
        "transfers: {sent} states sent to their owners, {unsent} successors not sent again (sent lately; --without sent sends them)"
    ));
    // The lowest (stratum, delays, worker) violation.
    let delays = |path: &[(u32, u32)]| path.iter().map(|m| u64::from(m.1)).sum::<u64>();
    let violation = all
        .iter()
        .filter_map(|s| s.violation.as_ref().map(|v| (v.bound, delays(&v.path), s.worker, v)))
        .min_by_key(|v| (v.0, v.1, v.2));
    let stop = all
        .iter()
        .filter_map(|s| s.stop.and_then(Halt::bounded_by))
        .min_by_key(|b| *b as u8);
    if let Some((_, _, _, v)) = violation {
        let (path, step) = (delay_path(&v.path), v.step);
        let mut driver = DelayDriver::new(root, &path);
        let ex = execute(program, &mut driver, config.max_steps, config.deadlock, false);
        let found = ex.violation.filter(|f| f.step == step as usize).ok_or_else(|| {
            SearchError::Internal(format!(
                "the violation a worker found at step {step} with delay path {path:?} does not replay ({:?}): is the program deterministic?",
                ex.end
            ))
        })?;
        let mut schedule = Schedule::new(PathKind::Delays, Some(&name), config.seed, config.max_steps, path);
        schedule.deadlock = config.deadlock;
        schedule.expect(&found.violation, found.step);
        r.outcome = Outcome::Violation;
        r.violation = Some(found);
        r.schedule = Some(schedule);
    } else if let Some(by) = stop {
        r.outcome = Outcome::Bounded;
        r.bounded_by = Some(by);
    } else if all.iter().any(|s| s.cut) {
        r.outcome = Outcome::Bounded;
        r.bounded_by = Some(BoundedBy::MaxSteps);
        r.notes.push(format!(
            "some executions were cut at --max-steps {}: the state space was not covered",
            config.max_steps
        ));
    } else {
        r.outcome = Outcome::Verified;
        r.collision_probability = Some(Report::collision_bound(
            r.states,
            all.iter().map(|s| s.fingerprint_bits).min().unwrap_or(64),
        ));
    }
    if r.cache_full {
        r.notes.push(
            "a worker's state cache filled its budget and stopped growing: the search stayed sound but explored again successors it could not remember".into(),
        );
    }
    Ok(r)
}

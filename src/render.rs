//! Rendering of reports and traces for people (text) and machines (JSON).

use mcheck_checker::search::exec::{End, Execution};
use mcheck_checker::search::progress::{human, rate};
use mcheck_checker::{Outcome, Report, Schedule, StepTrace};
use serde_json::{json, Value};

/// Payloads longer than this are abbreviated unless verbose.
pub const ABBREVIATE_AT: usize = 80;

fn abbreviate(s: &str, verbose: bool) -> String {
    if verbose || s.chars().count() <= ABBREVIATE_AT {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(ABBREVIATE_AT - 3).collect::<String>())
    }
}

/// One line per step, then the violation.
pub fn text_trace(ex: &Execution, verbose: bool) -> String {
    let mut out = String::new();
    for t in &ex.trace {
        out.push_str(&step_line(t, verbose));
        out.push('\n');
    }
    match &ex.violation {
        Some(f) => out.push_str(&format!("  !! {} (step {})\n", f.violation, f.step)),
        None => out.push_str(&format!("  -- {} after {} steps\n", end_text(ex), ex.steps)),
    }
    out
}

/// How an execution ended, in words.
pub fn end_text(ex: &Execution) -> String {
    match ex.end {
        End::Violation => "violation".into(),
        End::Terminal => "terminated (nothing enabled)".into(),
        End::MaxSteps => "reached max-steps".into(),
        End::PathEnd => "end of the schedule's path".into(),
        End::Diverged => format!("diverged: {}", ex.error.as_deref().unwrap_or("?")),
    }
}

fn step_line(t: &StepTrace, verbose: bool) -> String {
    let mut line = format!("  {:>4}  {}", t.step, t.actor_name);
    if let (Some(a), Some(b)) = (&t.state_before, &t.state_after) {
        if a != b {
            line.push_str(&format!(" [{a} -> {b}]"));
        } else {
            line.push_str(&format!(" [{a}]"));
        }
    }
    if let Some(h) = &t.handled {
        line.push_str(&format!(" handles {}", abbreviate(h, verbose)));
    }
    if t.alternatives > 1 && t.choices.is_empty() {
        line.push_str(&format!(" (alternative {} of {})", t.alternative, t.alternatives));
    }
    for c in &t.choices {
        line.push_str(&format!("; chooses {c}"));
    }
    for n in &t.notes {
        line.push_str(&format!(" {}", abbreviate(n, verbose)));
    }
    for (to, m) in &t.sent {
        line.push_str(&format!("; sends {} to {to}", abbreviate(m, verbose)));
    }
    for c in &t.created {
        line.push_str(&format!("; creates {c}"));
    }
    for a in &t.announced {
        line.push_str(&format!("; announces {}", abbreviate(a, verbose)));
    }
    if t.halted {
        line.push_str("; halts");
    }
    line
}

/// The execution as JSON steps.
pub fn json_trace(ex: &Execution) -> Value {
    json!({
        "steps": ex.trace,
        "violation": ex.violation,
        "end": end_text(ex),
    })
}

/// The closing summary of a run.
pub fn summary(r: &Report) -> String {
    let mut s = format!("outcome: {}", r.outcome);
    if let Some(b) = r.bounded_by {
        s.push_str(&format!(" (by {})", b.as_str()));
    }
    s.push('\n');
    if r.strategy == "ses" || r.strategy == "dfs" || r.strategy == "pb" {
        s.push_str(&format!(
            "states {} ({}), transitions {}, deferrals {}, peak frontier {}, bound {}, {:.2}s, peak memory {:.0} MiB\n",
            r.states,
            rate(r.states, r.elapsed_s),
            r.transitions,
            r.deferrals,
            r.peak_frontier,
            r.max_delays,
            r.elapsed_s,
            r.peak_memory_mb
        ));
        if r.strata.len() > 1 {
            s.push_str("bound  new states  transitions  deferrals  frontier  seconds\n");
            for st in &r.strata {
                s.push_str(&format!(
                    "{:>5}  {:>10}  {:>11}  {:>9}  {:>8}  {:>7.3}\n",
                    st.bound, st.new_states, st.transitions, st.deferrals, st.frontier, st.elapsed_s
                ));
            }
        }
    } else {
        s.push_str(&format!(
            "schedules {} ({}), steps {} ({}), truncated {}, longest {}, bound {}, {:.2}s\n",
            r.schedules,
            rate(r.schedules, r.elapsed_s),
            human(r.steps as f64),
            rate(r.steps, r.elapsed_s),
            r.truncated,
            r.longest,
            r.max_delays,
            r.elapsed_s
        ));
    }
    if r.outcome == Outcome::Verified {
        if let Some(p) = r.collision_probability {
            s.push_str(&format!(
                "verified: every reachable state was covered (probability that a fingerprint collision hid a state <= {p:.1e})\n"
            ));
        }
    }
    for n in &r.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s
}

/// Compare a replay's trail with the schedule's: `Some(message)` when they
/// differ, saying whether the model changed or is nondeterministic.
pub fn trail_mismatch(schedule: &Schedule, ex: &Execution, digest: &str) -> Option<String> {
    if schedule.trail.is_empty() {
        return None;
    }
    let cause = if !schedule.digest.is_empty() && schedule.digest != digest {
        "the model changed since the schedule was saved (its digest differs: parameters, bug or initial state)"
    } else {
        "the model is nondeterministic (same digest, different behaviour); usual causes: hash-map iteration order, time, global or thread-local state, randomness not from the schedule"
    };
    for (i, want) in schedule.trail.iter().enumerate() {
        match ex.trail.get(i) {
            Some(got) if got == want => {}
            Some(got) => {
                return Some(format!(
                    "replay diverged at step {i}: expected actor #{} alternative {} (enabled-set digest {:016x}), found actor #{} alternative {} (digest {:016x}); {cause}",
                    want.actor, want.alt, want.enabled, got.actor, got.alt, got.enabled
                ))
            }
            None => {
                return Some(format!(
                    "replay diverged at step {i}: the schedule expects {} steps, the replay stopped after {} ({}); {cause}",
                    schedule.trail.len(),
                    ex.trail.len(),
                    end_text(ex)
                ))
            }
        }
    }
    None
}

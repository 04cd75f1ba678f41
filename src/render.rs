//! Rendering of reports and traces for people (text) and machines (JSON).

use mcheck_checker::liveness::cycle_of;
pub use mcheck_checker::replay::end_text;
use mcheck_checker::report::{BoundedBy, CacheKey, Stratum};
use mcheck_checker::search::exec::Execution;
use mcheck_checker::search::{human, rate};
use mcheck_checker::{Outcome, Report, StepTrace};
use serde_json::{Value, json};

/// Payloads longer than this are abbreviated unless verbose.
pub const ABBREVIATE_AT: usize = 80;

fn abbreviate(s: &str, verbose: bool) -> String {
    if verbose || s.chars().count() <= ABBREVIATE_AT {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(ABBREVIATE_AT - 3).collect::<String>())
    }
}

/// One line per step, then the violation. A lasso's cycle (ARCHITECTURE.md,
/// "Liveness") is marked where it starts and where it returns.
///
/// ```
/// # use mcheck::models::lostupdate::LostUpdate;
/// # use mcheck::{builtin, render, replay_model, Schedule};
/// # let text = "mcheck2:lostupdate:p=clients=2,increments=1:bug=1:e=rtc:seed=0:max-steps=10000:v=monitor:at=9:by=counter:msg=all+2+clients+are+done+but+the+counter+is+1+instead+of+2%3A+an+increment+was+lost:d=1:sum=e4fc47ee22c00e30";
/// # let schedule: Schedule = text.parse().unwrap();
/// // The README's counterexample, replayed with its trace.
/// let ex = replay_model(&LostUpdate, builtin("rtc"), &schedule, true).unwrap();
/// let trace = render::text_trace(&ex, false);
/// assert!(trace.starts_with("     0  client1 handles Go; sends Read { from: #1 } to server0\n"));
/// assert_eq!(trace.lines().count(), 11); // ten steps and the violation
/// ```
pub fn text_trace(ex: &Execution, verbose: bool) -> String {
    let mut out = String::new();
    let cycle = cycle_of(ex);
    for t in &ex.trace {
        if let Some(c) = cycle.as_ref().filter(|c| c.start == t.step) {
            out.push_str(&format!(
                "  ---- cycle of {} starts here: steps {}..{} repeat forever ----\n",
                count_of(c.len() as u64, "step"),
                c.start,
                c.end - 1
            ));
        }
        out.push_str(&step_line(t, verbose));
        out.push('\n');
        if let Some(c) = cycle.as_ref().filter(|c| c.end == t.step + 1) {
            out.push_str(&format!(
                "  ---- cycle returns to the same state: after step {} the state is the one before step {} (same fingerprint) ----\n",
                t.step, c.start
            ));
        }
    }
    match &ex.violation {
        Some(f) => out.push_str(&format!("  !! {} (step {})\n", f.violation, f.step)),
        None => out.push_str(&format!(
            "  -- {} after {}\n",
            end_text(ex),
            count_of(ex.steps as u64, "step")
        )),
    }
    out
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
        line.push_str(&format!("; {}", abbreviate(n, verbose)));
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

pub use mcheck_checker::report::count_of;

/// What stopped a bounded search, in words.
pub fn bounded_text(b: BoundedBy) -> &'static str {
    match b {
        BoundedBy::Time => "stopped by the time limit",
        BoundedBy::States => "stopped by --max-states",
        BoundedBy::Schedules => "stopped by --max-schedules",
        BoundedBy::Memory => "stopped by the memory budget",
        BoundedBy::MaxDelays => "stopped at --max-delays with work left",
        BoundedBy::MaxSteps => "executions were cut at --max-steps",
        BoundedBy::Interrupted => "interrupted",
        BoundedBy::Sampling => "sampling covers no state space exhaustively",
    }
}

/// What a search stopped at `--max-delays` guarantees, given its cache key
/// (ARCHITECTURE.md, "Guarantees and the cache key"), as a line.
fn bound_guarantee(r: &Report, key: CacheKey) -> String {
    let d = r.bound_reached;
    let unit = if r.strategy == "pb" { "preemption" } else { "delay" };
    let bound = count_of(d, unit);
    match key {
        CacheKey::ProgramAndExplorerState => {
            format!("guarantee: no execution with at most {bound} violates anything (--exact-bound)\n")
        }
        CacheKey::ProgramState => format!(
            "guarantee: every state reached by the explored executions with at most {bound} was checked; executions pruned by the program-state cache may hide a violation within {bound} (use --exact-bound)\n"
        ),
    }
}

/// Per-bound tables longer than this are folded in the text summary.
pub const STRATA_SHOWN: usize = 20;

/// The per-bound table; beyond [`STRATA_SHOWN`] rows, the first and last
/// ones with a line saying how many were folded (`--json` has them all).
fn strata_table(strata: &[Stratum]) -> String {
    let mut s = String::from("bound  new states  transitions  deferrals  frontier  seconds\n");
    let line = |st: &Stratum| {
        format!(
            "{:>5}  {:>10}  {:>11}  {:>9}  {:>8}  {:>7.3}\n",
            st.bound, st.new_states, st.transitions, st.deferrals, st.frontier, st.elapsed_s
        )
    };
    let (head, tail) = (STRATA_SHOWN / 2, STRATA_SHOWN / 2 - 1);
    if strata.len() <= STRATA_SHOWN {
        strata.iter().for_each(|st| s.push_str(&line(st)));
        return s;
    }
    strata[..head].iter().for_each(|st| s.push_str(&line(st)));
    let folded = &strata[head..strata.len() - tail];
    s.push_str(&format!(
        "  ... {} folded (bounds {} to {}; --json lists every bound)\n",
        count_of(folded.len() as u64, "row"),
        folded[0].bound,
        folded[folded.len() - 1].bound
    ));
    strata[strata.len() - tail..]
        .iter()
        .for_each(|st| s.push_str(&line(st)));
    s
}

/// The closing summary of a run.
///
/// ```
/// use mcheck::models::lostupdate::LostUpdate;
/// use mcheck::prelude::*;
///
/// let report = Checker::model(&LostUpdate).set("clients", 2).set("increments", 1).run().unwrap();
/// assert!(mcheck::render::summary(&report).starts_with("outcome: verified\nchecked: safety, liveness"));
/// ```
pub fn summary(r: &Report) -> String {
    let mut s = format!("outcome: {}", r.outcome);
    if let Some(b) = r.bounded_by {
        s.push_str(&format!(" ({})", bounded_text(b)));
    }
    s.push('\n');
    if !r.monitors.is_empty() {
        s.push_str(&format!("checked: {}\n", r.monitors.join(", ")));
    }
    if let Some(member) = &r.found_by {
        s.push_str(&format!(
            "found by: {member} (the portfolio's member that found it first)\n"
        ));
    }
    if let (Some(BoundedBy::MaxDelays), Some(key)) = (r.bounded_by, r.cache_key) {
        s.push_str(&bound_guarantee(r, key));
    }
    // The portfolio has both: its SES member's states, its sampling
    // members' schedules.
    let exhaustive = matches!(r.strategy.as_str(), "ses" | "dfs" | "pb");
    if exhaustive || r.strategy == "portfolio" {
        s.push_str(&format!(
            "states {} ({}), transitions {}, deferrals {}, peak frontier {}, bound {}, {:.2}s, peak memory {:.0} MiB\n",
            r.states,
            rate(r.states, r.elapsed_s),
            r.transitions,
            r.deferrals,
            r.peak_frontier,
            r.bound_reached,
            r.elapsed_s,
            r.peak_memory_mb
        ));
        if r.strata.len() > 1 {
            s.push_str(&strata_table(&r.strata));
        }
    }
    if !exhaustive {
        s.push_str(&format!(
            "schedules {} ({}), steps {} ({}), truncated {}, longest {}, bound {}, {:.2}s\n",
            r.schedules,
            rate(r.schedules, r.elapsed_s),
            human(r.steps as f64),
            rate(r.steps, r.elapsed_s),
            r.truncated,
            r.longest,
            r.bound_reached,
            r.elapsed_s
        ));
    }
    if r.outcome == Outcome::Verified
        && let Some(p) = r.collision_probability
    {
        s.push_str(&format!(
                "verified: every reachable state was covered (probability that a fingerprint collision hid a state <= {p:.1e})\n"
            ));
    }
    for n in &r.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s
}

/// The participants of a trace, in order of first appearance.
fn participants(ex: &Execution) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut add = |n: &str| {
        if !names.iter().any(|x| x == n) {
            names.push(n.to_string());
        }
    };
    for t in &ex.trace {
        add(&t.actor_name);
        for (to, _) in &t.sent {
            add(to);
        }
        for c in &t.created {
            add(c);
        }
    }
    names
}

/// A message of the trace: who sent it at which step, the step that
/// handled it (None: never delivered) or that the network dropped it at,
/// and the steps that handled a duplicate of it.
struct Delivery {
    from: String,
    to: String,
    text: String,
    sent_at: usize,
    received_at: Option<usize>,
    lost_at: Option<usize>,
    duplicated_at: Vec<usize>,
}

/// The step's note (from the machine runtime) when the network dropped or
/// duplicated the message it names in `handled`.
fn network_note(t: &StepTrace, prefix: &str) -> bool {
    t.notes.iter().any(|n| n.starts_with(prefix))
}

/// Match every send with the step that handled it: per receiver, the
/// oldest pending send with the same text (FIFO queues; a deferred message
/// is matched when it is finally handled). A message the network dropped
/// is matched with the step that dropped it; a duplicate stays pending.
fn deliveries(ex: &Execution) -> (Vec<Delivery>, Vec<(usize, String)>) {
    let mut out: Vec<Delivery> = Vec::new();
    let mut unmatched = Vec::new();
    for t in &ex.trace {
        if let Some(h) = &t.handled {
            let hit = out
                .iter_mut()
                .find(|d| d.received_at.is_none() && d.lost_at.is_none() && d.to == t.actor_name && &d.text == h);
            match hit {
                Some(d) if network_note(t, "dropped by the network") => d.lost_at = Some(t.step),
                Some(d) if network_note(t, "duplicated by the network") => d.duplicated_at.push(t.step),
                Some(d) => d.received_at = Some(t.step),
                None => unmatched.push((t.step, h.clone())),
            }
        }
        for (to, m) in &t.sent {
            if m.ends_with("(dropped: receiver halted)") {
                continue;
            }
            out.push(Delivery {
                from: t.actor_name.clone(),
                to: to.clone(),
                text: m.clone(),
                sent_at: t.step,
                received_at: None,
                lost_at: None,
                duplicated_at: Vec::new(),
            });
        }
    }
    (out, unmatched)
}

/// Text safe inside a Mermaid label.
fn mermaid_text(s: &str, verbose: bool) -> String {
    let mut out = String::new();
    for c in abbreviate(s, verbose).chars() {
        match c {
            '#' => out.push_str("#35;"),
            ';' => out.push_str("#59;"),
            '\n' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// The trace as a Mermaid `sequenceDiagram`: one participant per machine,
/// one arrow per delivered message (drawn when it is handled, labelled
/// with the step that sent it; a crossed arrow "lost: ..." when the network
/// dropped it, a dotted one "duplicate of ..." when it delivered a
/// duplicate), notes for choices, creations, halts and the violation; a
/// lasso's cycle as a `loop` block.
///
/// ```
/// # use mcheck::models::lostupdate::LostUpdate;
/// # use mcheck::{builtin, render, replay_model, Schedule};
/// # let text = "mcheck2:lostupdate:p=clients=2,increments=1:bug=1:e=rtc:seed=0:max-steps=10000:v=monitor:at=9:by=counter:msg=all+2+clients+are+done+but+the+counter+is+1+instead+of+2%3A+an+increment+was+lost:d=1:sum=e4fc47ee22c00e30";
/// # let schedule: Schedule = text.parse().unwrap();
/// // The README's counterexample, replayed with its trace.
/// let ex = replay_model(&LostUpdate, builtin("rtc"), &schedule, true).unwrap();
/// let diagram = render::mermaid(&ex, false);
/// assert!(diagram.starts_with("sequenceDiagram\n    participant P0 as client1\n"));
/// ```
pub fn mermaid(ex: &Execution, verbose: bool) -> String {
    let names = participants(ex);
    let alias = |n: &str| format!("P{}", names.iter().position(|x| x == n).unwrap_or(0));
    let (dels, _) = deliveries(ex);
    let mut out = String::from("sequenceDiagram\n");
    for n in &names {
        out.push_str(&format!("    participant {} as {}\n", alias(n), mermaid_text(n, true)));
    }
    let cycle = cycle_of(ex);
    for t in &ex.trace {
        let me = alias(&t.actor_name);
        if let Some(c) = cycle.as_ref().filter(|c| c.start == t.step) {
            out.push_str(&format!(
                "    loop cycle: steps {}..{}, back to the state before step {}\n",
                c.start,
                c.end - 1,
                c.start
            ));
        }
        let mut delivered = false;
        for d in &dels {
            let (arrow, what, verb) = if d.received_at == Some(t.step) {
                ("->>", "", "handled")
            } else if d.lost_at == Some(t.step) {
                ("-x", "lost: ", "dropped")
            } else if d.duplicated_at.contains(&t.step) {
                ("-->>", "duplicate of ", "handled")
            } else {
                continue;
            };
            out.push_str(&format!(
                "    {}{arrow}{}: {what}{} (sent at {}, {verb} at {})\n",
                alias(&d.from),
                me,
                mermaid_text(&d.text, verbose),
                d.sent_at,
                t.step
            ));
            delivered = true;
        }
        if !delivered && let Some(h) = &t.handled {
            out.push_str(&format!(
                "    Note over {me}: {} handles {}\n",
                t.step,
                mermaid_text(h, verbose)
            ));
        }
        for c in &t.choices {
            out.push_str(&format!(
                "    Note over {me}: {} chooses {}\n",
                t.step,
                mermaid_text(c, verbose)
            ));
        }
        for n in &t.notes {
            out.push_str(&format!(
                "    Note over {me}: {} {}\n",
                t.step,
                mermaid_text(n, verbose)
            ));
        }
        for c in &t.created {
            out.push_str(&format!(
                "    Note over {me}: {} creates {}\n",
                t.step,
                mermaid_text(c, true)
            ));
        }
        for a in &t.announced {
            out.push_str(&format!(
                "    Note over {me}: {} announces {}\n",
                t.step,
                mermaid_text(a, verbose)
            ));
        }
        if t.halted {
            out.push_str(&format!("    Note over {me}: {} halts\n", t.step));
        }
        if cycle.as_ref().is_some_and(|c| c.end == t.step + 1) {
            out.push_str("    end\n");
        }
    }
    if let Some(f) = &ex.violation {
        let over = match f.violation.machine.as_deref() {
            Some(m) if names.iter().any(|x| x == m) => alias(m),
            _ if names.len() > 1 => format!("{},{}", alias(&names[0]), alias(&names[names.len() - 1])),
            _ => alias(names.first().map(String::as_str).unwrap_or("")),
        };
        out.push_str(&format!(
            "    Note over {over}: VIOLATION at step {}: {}\n",
            f.step,
            mermaid_text(&f.violation.to_string(), true)
        ));
    }
    out
}

fn dot_text(s: &str, verbose: bool) -> String {
    abbreviate(s, verbose).replace('\\', "\\\\").replace('"', "\\\"")
}

/// The trace as Graphviz DOT: one lane (cluster) per machine with a node
/// per step, and an edge per delivered message from the sending step to the
/// handling step (red and dotted, "lost: ...", to the step where the
/// network dropped it; dashed, "duplicate of ...", to a step that handled a
/// duplicate). A lasso's cycle: its steps orange, and an orange edge from
/// its last step back to its first.
///
/// ```
/// # use mcheck::models::lostupdate::LostUpdate;
/// # use mcheck::{builtin, render, replay_model, Schedule};
/// # let text = "mcheck2:lostupdate:p=clients=2,increments=1:bug=1:e=rtc:seed=0:max-steps=10000:v=monitor:at=9:by=counter:msg=all+2+clients+are+done+but+the+counter+is+1+instead+of+2%3A+an+increment+was+lost:d=1:sum=e4fc47ee22c00e30";
/// # let schedule: Schedule = text.parse().unwrap();
/// // The README's counterexample, replayed with its trace.
/// let ex = replay_model(&LostUpdate, builtin("rtc"), &schedule, true).unwrap();
/// let graph = render::dot(&ex, false);
/// assert!(graph.starts_with("digraph trace {\n") && graph.ends_with("}\n"));
/// ```
pub fn dot(ex: &Execution, verbose: bool) -> String {
    let names = participants(ex);
    let cycle = cycle_of(ex);
    let (dels, _) = deliveries(ex);
    let mut out =
        String::from("digraph trace {\n    rankdir=TB;\n    node [shape=box, fontsize=10];\n    edge [fontsize=9];\n");
    for (i, n) in names.iter().enumerate() {
        out.push_str(&format!(
            "    subgraph cluster_{i} {{\n        label=\"{}\";\n",
            dot_text(n, true)
        ));
        let steps: Vec<_> = ex.trace.iter().filter(|t| &t.actor_name == n).collect();
        for t in &steps {
            let mut label = format!("{}", t.step);
            if let Some(h) = &t.handled {
                label.push_str(&format!(": {}", dot_text(h, verbose)));
            }
            for c in &t.choices {
                label.push_str(&format!("\\nchooses {}", dot_text(c, verbose)));
            }
            if t.halted {
                label.push_str("\\nhalts");
            }
            let violated = ex.violation.as_ref().is_some_and(|f| f.step == t.step);
            let in_cycle = cycle.as_ref().is_some_and(|c| c.contains(&t.step));
            let style = match (violated, in_cycle) {
                (true, _) => ", color=red, penwidth=2",
                (false, true) => ", color=orange",
                (false, false) => "",
            };
            out.push_str(&format!("        s{} [label=\"{label}\"{style}];\n", t.step));
        }
        for w in steps.windows(2) {
            out.push_str(&format!(
                "        s{} -> s{} [style=dashed, arrowhead=none];\n",
                w[0].step, w[1].step
            ));
        }
        out.push_str("    }\n");
    }
    for d in &dels {
        let received = d.received_at.map(|r| (r, "", "color=blue"));
        let lost = d
            .lost_at
            .map(|l| (l, "lost: ", "color=red, style=dotted, arrowhead=tee"));
        let duplicated = d
            .duplicated_at
            .iter()
            .map(|&r| (r, "duplicate of ", "color=blue, style=dashed"));
        for (to, what, style) in received.into_iter().chain(lost).chain(duplicated) {
            out.push_str(&format!(
                "    s{} -> s{to} [label=\"{what}{}\", {style}];\n",
                d.sent_at,
                dot_text(&d.text, verbose)
            ));
        }
    }
    if let Some(c) = &cycle {
        out.push_str(&format!(
            "    s{} -> s{} [label=\"cycle returns to the same state\", color=orange, penwidth=2, constraint=false];\n",
            c.end - 1,
            c.start
        ));
    }
    if let Some(f) = &ex.violation {
        out.push_str(&format!(
            "    violation [shape=octagon, color=red, label=\"{}\"];\n",
            dot_text(&format!("step {}: {}", f.step, f.violation), true)
        ));
        if ex.trace.iter().any(|t| t.step == f.step) {
            out.push_str(&format!("    s{} -> violation [color=red];\n", f.step));
        }
    }
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_agree_with_their_noun() {
        assert_eq!(count_of(0u64, "delay"), "0 delays");
        assert_eq!(count_of(1u64, "delay"), "1 delay");
        assert_eq!(count_of(2u32, "step"), "2 steps");
    }

    fn report_with_strata(n: u32) -> Report {
        let mut r = Report::new("ses", Some("rtc"), 0, 1);
        r.bounded_by = Some(BoundedBy::Interrupted);
        r.strata = (0..n)
            .map(|bound| {
                let mut s = Stratum::default();
                (s.bound, s.new_states) = (bound, 1000 + u64::from(bound));
                s
            })
            .collect();
        r
    }

    /// The bounds listed in a summary's per-bound table.
    fn listed_bounds(summary: &str) -> Vec<u32> {
        summary
            .lines()
            .skip_while(|l| !l.starts_with("bound  new states"))
            .skip(1)
            .filter_map(|l| l.split_whitespace().next()?.parse().ok())
            .collect()
    }

    #[test]
    fn per_bound_table_folds_beyond_twenty_rows() {
        let s = summary(&report_with_strata(20));
        assert_eq!(listed_bounds(&s), (0..20).collect::<Vec<_>>());
        assert!(!s.contains("folded"), "{s}");
        let s = summary(&report_with_strata(50));
        let want: Vec<u32> = (0..10).chain(41..50).collect();
        assert_eq!(listed_bounds(&s), want, "{s}");
        assert!(
            s.contains("  ... 31 rows folded (bounds 10 to 40; --json lists every bound)\n"),
            "{s}"
        );
        let s = summary(&report_with_strata(21));
        assert!(s.contains("... 2 rows folded (bounds 10 to 11;"), "{s}");
    }

    #[test]
    fn bounded_outcome_reads_as_words() {
        let s = summary(&report_with_strata(2));
        assert!(s.starts_with("outcome: bounded (interrupted)\n"), "{s}");
        let mut r = report_with_strata(2);
        r.bounded_by = Some(BoundedBy::Time);
        assert!(summary(&r).starts_with("outcome: bounded (stopped by the time limit)\n"));
    }
}

#[cfg(test)]
mod network_tests {
    use super::*;
    use mcheck_checker::search::exec::End;

    fn step(step: usize, actor: &str, handled: Option<&str>, notes: &[&str], sent: &[&str]) -> StepTrace {
        let mut t = StepTrace::default();
        t.step = step;
        t.actor_name = actor.into();
        t.handled = handled.map(String::from);
        t.notes = notes.iter().map(|n| n.to_string()).collect();
        t.sent = sent.iter().map(|m| ("receiver1".to_string(), m.to_string())).collect();
        t
    }

    /// A drop and a duplicate by the network: a crossed "lost" arrow, a
    /// dotted "duplicate of" arrow, and the real delivery after the duplicate.
    #[test]
    fn drops_and_duplicates_are_drawn() {
        let dup = "duplicated by the network (stays pending; duplicate 1 of at most 1)";
        let ex = Execution {
            steps: 4,
            end: End::Terminal,
            violation: None,
            trace: vec![
                step(0, "sender0", Some("Go"), &[], &["A", "B"]),
                step(1, "receiver1", Some("A"), &["dropped by the network"], &[]),
                step(2, "receiver1", Some("B"), &[dup], &[]),
                step(3, "receiver1", Some("B"), &[], &[]),
            ],
            trail: vec![],
            error: None,
        };
        let m = mermaid(&ex, false);
        assert!(m.contains("    P0-xP1: lost: A (sent at 0, dropped at 1)\n"), "{m}");
        assert!(
            m.contains("    P0-->>P1: duplicate of B (sent at 0, handled at 2)\n"),
            "{m}"
        );
        assert!(m.contains("    P0->>P1: B (sent at 0, handled at 3)\n"), "{m}");
        assert_eq!(m.matches("->>").count(), 2, "{m}");
        let d = dot(&ex, false);
        assert!(
            d.contains("    s0 -> s1 [label=\"lost: A\", color=red, style=dotted, arrowhead=tee];\n"),
            "{d}"
        );
        assert!(
            d.contains("    s0 -> s2 [label=\"duplicate of B\", color=blue, style=dashed];\n"),
            "{d}"
        );
        assert!(d.contains("    s0 -> s3 [label=\"B\", color=blue];\n"), "{d}");
    }
}

//! Rendering of reports and traces for people (text) and machines (JSON).

pub use mcheck_checker::replay::end_text;
use mcheck_checker::search::exec::Execution;
use mcheck_checker::search::progress::{human, rate};
use mcheck_checker::{Outcome, Report, StepTrace};
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
            r.bound_reached,
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
            r.bound_reached,
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

/// A message of the trace: who sent it at which step, and the step that
/// handled it (None: never delivered).
struct Delivery {
    from: String,
    to: String,
    text: String,
    sent_at: usize,
    received_at: Option<usize>,
}

/// Match every send with the step that handled it: per receiver, the
/// oldest pending send with the same text (FIFO queues; a deferred message
/// is matched when it is finally handled).
fn deliveries(ex: &Execution) -> (Vec<Delivery>, Vec<(usize, String)>) {
    let mut out: Vec<Delivery> = Vec::new();
    let mut unmatched = Vec::new();
    for t in &ex.trace {
        if let Some(h) = &t.handled {
            let hit = out
                .iter_mut()
                .find(|d| d.received_at.is_none() && d.to == t.actor_name && &d.text == h);
            match hit {
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
/// with the step that sent it), notes for choices, creations, halts and
/// the violation.
pub fn mermaid(ex: &Execution, verbose: bool) -> String {
    let names = participants(ex);
    let alias = |n: &str| format!("P{}", names.iter().position(|x| x == n).unwrap_or(0));
    let (dels, _) = deliveries(ex);
    let mut out = String::from("sequenceDiagram\n");
    for n in &names {
        out.push_str(&format!("    participant {} as {}\n", alias(n), mermaid_text(n, true)));
    }
    for t in &ex.trace {
        let me = alias(&t.actor_name);
        let mut delivered = false;
        for d in dels.iter().filter(|d| d.received_at == Some(t.step)) {
            out.push_str(&format!(
                "    {}->>{}: {} (sent at {}, handled at {})\n",
                alias(&d.from),
                me,
                mermaid_text(&d.text, verbose),
                d.sent_at,
                t.step
            ));
            delivered = true;
        }
        if !delivered {
            if let Some(h) = &t.handled {
                out.push_str(&format!(
                    "    Note over {me}: {} handles {}\n",
                    t.step,
                    mermaid_text(h, verbose)
                ));
            }
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
/// handling step.
pub fn dot(ex: &Execution, verbose: bool) -> String {
    let names = participants(ex);
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
            let style = if violated { ", color=red, penwidth=2" } else { "" };
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
        if let Some(r) = d.received_at {
            out.push_str(&format!(
                "    s{} -> s{} [label=\"{}\", color=blue];\n",
                d.sent_at,
                r,
                dot_text(&d.text, verbose)
            ));
        }
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

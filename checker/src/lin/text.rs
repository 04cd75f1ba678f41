//! A history as a timeline of invocations and responses, and the text of
//! a linearizability failure.

use super::check::NotLinearizable;
use super::history::{Entry, History};
use super::spec::SequentialSpec;
use std::fmt::Write;

/// The history as a timeline: one line per event, one column per process
/// (`[` invocation, `]` response, `|` open, `.` idle), then the event.
/// Events at the indices of `mark` are flagged with `<-`.
pub fn timeline<S: SequentialSpec>(history: &History<S>, mark: &[usize]) -> String {
    let mut processes: Vec<u32> = Vec::new();
    for e in history.entries() {
        let (Entry::Invoke { process, .. } | Entry::Return { process, .. } | Entry::Fail { process }) = e;
        if !processes.contains(process) {
            processes.push(*process);
        }
    }
    let mut open: Vec<Option<String>> = vec![None; processes.len()];
    let mut out = String::from("      ");
    for p in &processes {
        let _ = write!(out, "{:<4}", format!("p{p}"));
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    for (at, e) in history.entries().iter().enumerate() {
        let (Entry::Invoke { process, .. } | Entry::Return { process, .. } | Entry::Fail { process }) = e;
        let column = processes.iter().position(|p| p == process).unwrap_or(0);
        let _ = write!(out, "{at:>4}  ");
        for (c, o) in open.iter().enumerate() {
            let sign = match (c == column, e, o.is_some()) {
                (true, Entry::Invoke { .. }, _) => '[',
                (true, Entry::Return { .. } | Entry::Fail { .. }, _) => ']',
                (false, _, true) => '|',
                (false, _, false) => '.',
            };
            let _ = write!(out, "{sign:<4}");
        }
        match e {
            Entry::Invoke { op, .. } => {
                let _ = write!(out, "p{process} invokes {op:?}");
                open[column] = Some(format!("{op:?}"));
            }
            Entry::Return { ret, .. } => {
                let op = open[column].take().unwrap_or_default();
                let _ = write!(out, "p{process} {op} returns {ret:?}");
            }
            Entry::Fail { .. } => {
                let op = open[column].take().unwrap_or_default();
                let _ = write!(out, "p{process} {op} failed (no effect)");
            }
        }
        if mark.contains(&at) {
            out.push_str("   <-");
        }
        out.push('\n');
    }
    out
}

/// The message of a failure: the culprit and why, the timeline with the
/// culprit's events marked, and the longest linearizable prefix.
pub fn explain<S: SequentialSpec>(history: &History<S>, failure: &NotLinearizable<S>) -> String {
    let ops = &failure.operations;
    let c = &ops[failure.culprit];
    let ret = c.ret.as_ref().map_or("(pending)".to_string(), |r| format!("{r:?}"));
    let span = match c.returned {
        Some(r) => format!("events {}..{}", c.call, r),
        None => format!("event {}, pending", c.call),
    };
    let key = failure.key.map(|k| format!(" (key {k})")).unwrap_or_default();
    let mut out = format!(
        "history not linearizable{key}: p{} {:?} returned {ret} ({span}) but has no valid place: \
         after the longest linearizable prefix it would return {:?}\n",
        c.process, c.op, failure.would_return
    );
    let mark: Vec<usize> = std::iter::once(c.call).chain(c.returned).collect();
    out.push_str(&timeline(history, &mark));
    let prefix: Vec<String> = failure
        .prefix
        .iter()
        .map(|&i| {
            let o = &ops[i];
            let ret = o.ret.as_ref().map_or("_".to_string(), |r| format!("{r:?}"));
            format!("p{} {:?} -> {ret}", o.process, o.op)
        })
        .collect();
    let _ = write!(
        out,
        "longest linearizable prefix{key}: [{}], spec state {:?}",
        prefix.join(", "),
        failure.state
    );
    out
}

//! The five safety properties of Raft (the paper's Figure 3, plus the
//! client's view): what the monitors remember and how they judge.

use super::server::{Role, Server};
use super::{Cfg, Entry, Note};
use mcheck_checker::lin::{Log, Tracker};
use mcheck_checker::machine::MonitorError;
use serde::{Deserialize, Serialize};

/// A monitor's verdict.
pub type Verdict = Result<(), MonitorError>;

/// The one place a violation is built.
fn violation(monitor: &'static str, message: String) -> Verdict {
    Err(MonitorError::new(monitor, message))
}

/// An entry some leader declared committed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Committed {
    /// The entry.
    pub entry: Entry,
    /// The leader that committed it.
    pub by: u8,
    /// That leader's term.
    pub term: u8,
}

/// What the monitors remember (part of the state).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Monitor {
    /// Per term (index = term), the leader's id plus one (0: none yet).
    pub leaders: Vec<u8>,
    /// Per log index (from 1 at position 0), the first entry a leader
    /// committed there.
    pub committed: Vec<Committed>,
    /// Per log index (from 1 at position 0), the first command applied.
    pub applied: Vec<u8>,
    /// Commands acknowledged to the client (bit `c`).
    pub acked: u64,
    /// The client's history, checked against a log as it grows (its open
    /// operations and configurations are hashed: ARCHITECTURE.md,
    /// "Linearizability").
    pub history: Tracker<Log>,
}

/// Observes one announcement: election safety (one leader per term), state
/// machine safety (one command applied and one entry committed per index),
/// the acknowledged commands and the client's history (linearizability).
pub fn observe(mon: &mut Monitor, note: &Note) -> Verdict {
    match *note {
        Note::Leader { term, id } => {
            let t = term as usize;
            if mon.leaders.len() <= t {
                mon.leaders.resize(t + 1, 0);
            }
            match mon.leaders[t] {
                0 => mon.leaders[t] = id + 1,
                other => {
                    return violation(
                        "election-safety",
                        format!("two leaders in term {term}: server{} and server{id}", other - 1),
                    );
                }
            }
        }
        Note::Committed { index, entry, by, term } => {
            let i = index as usize - 1;
            match mon.committed.get(i) {
                None if i == mon.committed.len() => mon.committed.push(Committed { entry, by, term }),
                None => {
                    return violation(
                        "state-machine-safety",
                        format!("server{by} commits index {index} in term {term} before index {}", i),
                    );
                }
                Some(c) if c.entry != entry => {
                    return violation(
                        "state-machine-safety",
                        format!(
                            "index {index} committed twice: {:?} by leader server{} in term {}, {entry:?} by leader server{by} in term {term}",
                            c.entry, c.by, c.term
                        ),
                    );
                }
                Some(_) => {}
            }
        }
        Note::Applied { server, index, cmd } => {
            let i = index as usize - 1;
            match mon.applied.get(i) {
                None => {
                    mon.applied.resize(i, 0);
                    mon.applied.push(cmd);
                }
                Some(0) => mon.applied[i] = cmd,
                Some(&c) if c != cmd => {
                    return violation(
                        "state-machine-safety",
                        format!("server{server} applies c{cmd} at index {index} where c{c} was applied"),
                    );
                }
                Some(_) => {}
            }
        }
        Note::Acked(cmd) => mon.acked |= 1 << cmd,
        Note::Client(ref entry) => mon.history.record(entry).map_err(MonitorError::linearizability)?,
    }
    Ok(())
}

/// Checks the servers' logs after every step: log matching, leader
/// completeness and durability (every acknowledged command is in the logs
/// of a majority).
pub fn check(cfg: &Cfg, servers: &[&Server], mon: &Monitor) -> Verdict {
    for (a, sa) in servers.iter().enumerate() {
        for sb in &servers[a + 1..] {
            log_matching(sa, sb)?;
        }
        leader_completeness(sa, mon)?;
    }
    for cmd in (1..64u8).filter(|c| mon.acked & (1 << c) != 0) {
        let holders = servers.iter().filter(|s| s.log.iter().any(|e| e.cmd == cmd));
        let n = holders.clone().count() as u32;
        if n < cfg.majority() {
            let names: Vec<String> = holders.map(|s| format!("server{}", s.id)).collect();
            return violation(
                "durability",
                format!(
                    "acknowledged command c{cmd} is in the log of only {n} of {} servers ({}): fewer than a majority",
                    cfg.servers,
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                ),
            );
        }
    }
    Ok(())
}

/// If two logs hold an entry with the same index and term, they are
/// identical up to it (it is enough to look at the highest such index).
fn log_matching(a: &Server, b: &Server) -> Verdict {
    let n = a.log.len().min(b.log.len());
    if let Some(i) = (0..n).rev().find(|&i| a.log[i].term == b.log[i].term)
        && a.log[..=i] != b.log[..=i]
    {
        return violation(
            "log-matching",
            format!(
                "server{} and server{} both hold a term-{} entry at index {} but their logs differ before it: {:?} and {:?}",
                a.id,
                b.id,
                a.log[i].term,
                i + 1,
                &a.log[..=i],
                &b.log[..=i]
            ),
        );
    }
    Ok(())
}

/// A leader's log holds every entry committed in an earlier term.
fn leader_completeness(s: &Server, mon: &Monitor) -> Verdict {
    if !matches!(s.role, Role::Leader { .. }) {
        return Ok(());
    }
    for (i, c) in mon.committed.iter().enumerate() {
        if c.term < s.term && s.log.get(i) != Some(&c.entry) {
            let has = s.log.get(i).map_or("nothing".to_string(), |e| format!("{e:?}"));
            return violation(
                "leader-completeness",
                format!(
                    "leader server{} of term {} lacks the entry {:?} at index {} that leader server{} committed in term {}; it holds {has} there",
                    s.id,
                    s.term,
                    c.entry,
                    i + 1,
                    c.by,
                    c.term
                ),
            );
        }
    }
    Ok(())
}

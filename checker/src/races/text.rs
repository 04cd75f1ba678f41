//! The race report as text: the full form (`mcheck replay --races`) and
//! the one-paragraph form of the normal report.

use super::{Explanation, Message, Race};
use std::fmt::Write;

/// Message texts longer than this are abbreviated in the report.
const LONG: usize = 60;

fn short(s: &str) -> String {
    if s.chars().count() <= LONG {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(LONG - 3).collect::<String>())
    }
}

fn sent(m: &Message) -> String {
    match m.sent_at {
        Some(s) => format!("from {} (sent at step {s})", m.from_name),
        None => "from the set-up".to_string(),
    }
}

impl Explanation {
    /// The messages of `race`.
    pub fn pair(&self, race: &Race) -> (&Message, &Message) {
        (&self.messages[race.first], &self.messages[race.second])
    }

    /// The races whose flip removes the violation.
    pub fn responsible(&self) -> impl Iterator<Item = (usize, &Race)> {
        self.races.iter().enumerate().filter(|(_, r)| r.responsible())
    }

    /// One race in words: receiver, both messages with their senders and
    /// steps.
    pub fn race_text(&self, race: &Race) -> String {
        let (x, y) = self.pair(race);
        let second = match y.received_at {
            Some(at) => format!("at step {at}"),
            None => "still in flight at the end".to_string(),
        };
        format!(
            "{} received {} {} at step {} before {} {} {second}{}",
            x.to_name,
            short(&x.text),
            sent(x),
            x.received_at.unwrap_or_default(),
            short(&y.text),
            sent(y),
            if race.unordered { " (unordered)" } else { "" }
        )
    }

    /// What flipping `race` did, in words.
    pub fn variant_text(&self, race: &Race) -> String {
        let v = &race.variant;
        let mut out = match (&v.violation, v.violates) {
            (Some(f), true) => format!("still violates ({} at step {})", f.violation, f.step),
            (Some(f), false) => format!(
                "removes the violation, but another appears ({} at step {})",
                f.violation, f.step
            ),
            (None, _) => format!(
                "removes the violation (none of the variant's {} steps violates)",
                v.steps
            ),
        };
        let list = |steps: &[usize]| steps.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ");
        if !v.impossible.is_empty() {
            let _ = write!(
                out,
                "; the flip makes {} of the later steps impossible (originally steps {})",
                v.impossible.len(),
                list(&v.impossible)
            );
        }
        if !v.changed.is_empty() {
            let _ = write!(
                out,
                "; {} step{} received another message (originally steps {})",
                v.changed.len(),
                if v.changed.len() == 1 { "" } else { "s" },
                list(&v.changed)
            );
        }
        out
    }

    /// The full report: the happens-before order in figures, every race
    /// with its variant, and the races the violation depends on.
    pub fn report(&self) -> String {
        let mut out = String::new();
        let received = self.messages.iter().filter(|m| m.received_at.is_some()).count();
        let setup = self.messages.iter().filter(|m| m.sent_at.is_none()).count();
        let actors = self.clocks.last().map_or(0, Vec::len);
        let _ = writeln!(
            out,
            "Happens-before: {} steps of {} actors; {} messages ({} from the set-up), {} received",
            self.trace.len(),
            actors,
            self.messages.len(),
            setup,
            received
        );
        // The order itself: each step's vector clock, one entry per actor.
        let names: Vec<String> = (0..actors)
            .map(|i| {
                let view = self.views.last().and_then(|v| v.actors.get(i));
                view.map_or_else(|| format!("#{i}"), |a| a.name.clone())
            })
            .collect();
        let _ = writeln!(out, "  vector clocks, entries by actor: {}", names.join(" "));
        for (t, clock) in self.trace.iter().zip(&self.clocks) {
            let entries: Vec<String> = clock.iter().map(|c| c.to_string()).collect();
            let _ = write!(out, "  {:>4}  {:<14} [{}]", t.step, t.actor_name, entries.join(" "));
            if let Some(m) = self.messages.iter().find(|m| m.received_at == Some(t.step)) {
                let _ = write!(out, " receives {} {}", short(&m.text), sent(m));
            }
            out.push('\n');
        }
        match &self.violation {
            Some(f) => {
                let _ = writeln!(out, "Violation: {} (step {})", f.violation, f.step);
            }
            None => out.push_str("Violation: none\n"),
        }
        let _ = writeln!(out, "Races: {}", self.races.len());
        for (i, r) in self.races.iter().enumerate() {
            let _ = writeln!(out, "  race {}: {}", i + 1, self.race_text(r));
            let _ = writeln!(out, "      flipped: {}", self.variant_text(r));
        }
        out.push_str(&self.verdict());
        out.push('\n');
        out
    }

    /// The races the violation depends on, in one paragraph (the full
    /// report's conclusion).
    pub fn verdict(&self) -> String {
        self.conclusion(usize::MAX)
    }

    /// The short form of the normal report: the conclusion naming at most
    /// three races.
    pub fn summary(&self) -> String {
        self.conclusion(3)
    }

    fn conclusion(&self, named: usize) -> String {
        let mut responsible: Vec<String> = self
            .responsible()
            .map(|(i, r)| format!("race {}: {}", i + 1, self.race_text(r)))
            .collect();
        if responsible.len() > named {
            let more = responsible.len() - named;
            responsible.truncate(named);
            responsible.push(format!("and {more} more"));
        }
        match (self.races.len(), responsible.len()) {
            (0, _) => "No races: no two messages to the same actor could have been received in the other order.".into(),
            (n, 0) => format!(
                "No single flip removes the violation (of {n} race{}).",
                if n == 1 { "" } else { "s" }
            ),
            (n, _) => format!(
                "The violation depends on {} of {n} race{} (flipping one removes it):\n  {}",
                self.responsible().count(),
                if n == 1 { "" } else { "s" },
                responsible.join("\n  ")
            ),
        }
    }
}

//! The coverage section as text for people.

use super::report::{Coverage, Status};
use std::fmt::Write;

impl Coverage {
    /// The section as text: per actor, one line per item with each way it
    /// was used and its count; the declared handlers that never ran; then
    /// every reachability property with its schedule.
    pub fn text(&self) -> String {
        let mut out = format!("Coverage (counted over {}):\n", self.counted_over.text());
        let width = self.entries.iter().map(|e| e.item.len()).max().unwrap_or(0);
        let mut i = 0;
        while i < self.entries.len() {
            let actor = &self.entries[i].actor;
            let _ = writeln!(out, "  {actor}");
            while i < self.entries.len() && &self.entries[i].actor == actor {
                let item = &self.entries[i].item;
                let mut uses = Vec::new();
                while i < self.entries.len() && &self.entries[i].actor == actor && &self.entries[i].item == item {
                    uses.push(format!("{} {}", self.entries[i].how, self.entries[i].count));
                    i += 1;
                }
                let _ = writeln!(out, "    {item:<width$}  {}", uses.join(", "));
            }
        }
        if self.entries.is_empty() {
            out.push_str("  (no steps)\n");
        }
        let dead: Vec<String> = self.dead().map(|e| format!("{} {}", e.actor, e.item)).collect();
        if !dead.is_empty() {
            let _ = writeln!(out, "  Handlers that never ran: {}", dead.join(", "));
        }
        if self.properties.is_empty() {
            return out;
        }
        out.push_str("Reachability properties:\n");
        let w = self.properties.iter().map(|p| p.name.len()).max().unwrap_or(0);
        for p in &self.properties {
            let _ = match (p.status, &p.schedule, p.steps) {
                (Status::Reached, Some(s), Some(n)) => {
                    writeln!(out, "  {:<w$}  reached in {n} steps: {}", p.name, s.to_text())
                }
                (Status::Reached, _, _) => writeln!(out, "  {:<w$}  reached in the initial state", p.name),
                (Status::Unreached, _, _) => {
                    writeln!(out, "  {:<w$}  UNREACHED: it holds in no reachable state", p.name)
                }
                (Status::NotSeen, _, _) => writeln!(out, "  {:<w$}  not seen", p.name),
            };
        }
        out
    }
}

//! A counterexample as one self-contained HTML page
//! (`mcheck replay FILE --format html`): the sequence diagram as SVG with
//! the races marked, a step slider and step list, and for the step shown
//! every machine's state and inbox (what changed highlighted), the monitors
//! and the violation. No network access, no external scripts or fonts: the
//! data is embedded as JSON and a short script draws the step view. The
//! page honours a URL fragment `#step=N` or `#step=last`, `#hide=0,4`
//! (lanes hidden) and `#labels=all`.
//!
//! Legibility: a message is labelled with its kind (its whole text is the
//! tooltip), and each label goes at the first place along its arrow where
//! it overlaps no label placed before it (lane headers, step numbers and
//! race labels first, then the messages of the races that matter, then
//! the others; `Placed`), else it shows on hover only. The script counts
//! the visible labels whose boxes overlap as the browser lays them out
//! (`#overlaps`), which `tests/all/browser.rs` checks on Raft bug 1.

use mcheck_checker::Schedule;
use mcheck_checker::races::Explanation;
use serde_json::json;
use std::fmt::Write;

/// Horizontal distance between two lanes of the diagram.
const LANE: usize = 125;
/// Vertical distance between two steps.
const ROW: usize = 26;
/// Height of the lane headers.
const TOP: usize = 50;
/// A character's width at the diagram's 11 px sans-serif, on the wide
/// side (capitals), for laying labels out without a browser.
const CHAR_W: f64 = 7.0;
/// A label's height: ascent above the baseline, descent below.
const ASCENT: f64 = 10.0;
const DESCENT: f64 = 3.0;
/// Where along its arrow a message's label may go, best first.
const ALONG: [f64; 9] = [0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8, 0.12, 0.88];

/// A text's box in the diagram's coordinates.
#[derive(Clone, Copy, Debug)]
struct Area {
    x0: f64,
    y0: f64,
    x1: f64,
    y1: f64,
}

impl Area {
    /// The box of `text` with its baseline at `y`, starting at `x` or,
    /// `centered`, centred on it.
    fn of(text: &str, x: f64, y: f64, centered: bool) -> Area {
        let w = text.chars().count() as f64 * CHAR_W;
        let x0 = if centered { x - w / 2.0 } else { x };
        Area {
            x0,
            y0: y - ASCENT,
            x1: x0 + w,
            y1: y + DESCENT,
        }
    }

    fn overlaps(&self, o: &Area) -> bool {
        self.x0 < o.x1 && o.x0 < self.x1 && self.y0 < o.y1 && o.y0 < self.y1
    }
}

/// The labels placed so far; a new one goes where it overlaps none.
#[derive(Default)]
struct Placed(Vec<Area>);

impl Placed {
    /// Claim `area` unconditionally (headers, step numbers, race labels).
    fn claim(&mut self, area: Area) {
        self.0.push(area);
    }

    /// The first of `candidates` (baselines) where `text`, centred, meets
    /// no placed label; claimed.
    fn first_free(&mut self, text: &str, candidates: impl IntoIterator<Item = (f64, f64)>) -> Option<(f64, f64)> {
        let (at, area) = candidates
            .into_iter()
            .map(|(x, y)| ((x, y), Area::of(text, x, y, true)))
            .find(|(_, a)| !self.0.iter().any(|p| p.overlaps(a)))?;
        self.0.push(area);
        Some(at)
    }
}

/// A message's label in the diagram: its kind (`Append` of
/// `Append(Append { term: 4, .. })`), the whole text being its tooltip.
fn kind(text: &str) -> String {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    match end {
        0 => short(text, 12),
        _ => text[..end].to_string(),
    }
}

/// Text safe inside HTML and SVG elements and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(n - 3).collect::<String>())
    }
}

/// The lanes of the diagram: every actor that appears, in id order (the
/// views name them all; without views, the order of first appearance).
fn lanes(ex: &Explanation) -> Vec<String> {
    if let Some(last) = ex.views.last().filter(|v| !v.actors.is_empty()) {
        return last.actors.iter().map(|a| a.name.clone()).collect();
    }
    let mut names: Vec<String> = Vec::new();
    for t in &ex.trace {
        if !names.contains(&t.actor_name) {
            names.push(t.actor_name.clone());
        }
    }
    names
}

/// The sequence diagram: a lane per actor, a dot per step, an arrow per
/// message from the step that sent it to the step that took it, the races
/// the violation depends on in orange (the others dashed grey), the
/// violation in red.
fn diagram(ex: &Explanation) -> String {
    let names = lanes(ex);
    let lane = |name: &str| names.iter().position(|n| n == name).unwrap_or(0);
    let x = |i: usize| 90 + i * LANE;
    let y = |step: usize| TOP + 20 + step * ROW;
    let (width, height) = (names.len() * LANE + 60, y(ex.trace.len()) + 20);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg id="diagram" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">"#
    );
    s.push_str(r##"<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#446"/></marker></defs>"##);
    let mut placed = Placed::default();
    for (i, n) in names.iter().enumerate() {
        let _ = write!(
            s,
            r##"<g data-lanes="{i}"><line x1="{0}" y1="{TOP}" x2="{0}" y2="{height}" stroke="#bbb"/><text x="{0}" y="{1}" text-anchor="middle" font-weight="bold">{2}</text></g>"##,
            x(i),
            TOP - 10,
            escape(n)
        );
        placed.claim(Area::of(n, x(i) as f64, (TOP - 10) as f64, true));
    }
    for t in &ex.trace {
        placed.claim(Area::of(&t.step.to_string(), 8.0, (y(t.step) + 4) as f64, false));
    }
    // One label per receipt (or per in-flight message): "races 2, 5",
    // placed first and drawn over the arrows.
    let mut race_labels = String::new();
    let mut labels: Vec<(usize, usize, Vec<usize>, bool)> = Vec::new();
    for (i, r) in ex.races.iter().enumerate() {
        let m = &ex.messages[r.second];
        let at = (lane(&m.to_name), m.received_at.unwrap_or(ex.trace.len()));
        match labels.iter_mut().find(|l| (l.0, l.1) == at) {
            Some(l) => {
                l.2.push(i + 1);
                l.3 |= r.responsible();
            }
            None => labels.push((at.0, at.1, vec![i + 1], r.responsible())),
        }
    }
    for (lane, at, races, responsible) in labels {
        let list: Vec<String> = races.iter().map(|n| n.to_string()).collect();
        let text = format!("race{} {}", if races.len() > 1 { "s" } else { "" }, list.join(", "));
        let (lx, ly) = (x(lane) + 8, y(at) + 4);
        placed.claim(Area::of(&text, lx as f64, ly as f64, false));
        let _ = write!(
            race_labels,
            r#"<text class="racelabel{}" data-lanes="{lane}" x="{lx}" y="{ly}">{text}</text>"#,
            if responsible { " responsible" } else { "" },
        );
    }
    let raced: Vec<(usize, &str)> = ex
        .races
        .iter()
        .flat_map(|r| {
            let class = if r.responsible() { "race responsible" } else { "race" };
            [(r.first, class), (r.second, class)]
        })
        .collect();
    let class_of = |id: usize| {
        raced
            .iter()
            .filter(|(r, _)| *r == id)
            .map(|(_, c)| *c)
            .max_by_key(|c| c.len())
            .unwrap_or("msg")
    };
    // Labels of the races that matter first, then the other races', then
    // the rest: each where it overlaps no label placed before it, else
    // shown on hover only (its tooltip always has the whole message).
    let mut order: Vec<usize> = (0..ex.messages.len()).collect();
    order.sort_by_key(|&id| std::cmp::Reverse(class_of(id).len()));
    let mut drawn = vec![String::new(); ex.messages.len()];
    for id in order {
        let m = &ex.messages[id];
        // A message still in flight at the end points at the last row.
        let to = m.received_at.or(m.dropped_at).unwrap_or(ex.trace.len());
        let from = m.sent_at.map_or((lane(&m.to_name), 0), |s| (lane(&m.from_name), s));
        let dash = if m.received_at.is_none() {
            r#" stroke-dasharray="2,3""#
        } else {
            ""
        };
        let (from_lane, to_lane) = (from.0, lane(&m.to_name));
        let (x1, y1, x2, y2) = (
            x(from_lane),
            y(from.1) - if m.sent_at.is_none() { ROW } else { 0 },
            x(to_lane),
            y(to),
        );
        let label = kind(&m.text);
        let along = ALONG.iter().map(|f| {
            (
                x1 as f64 + f * (x2 as f64 - x1 as f64),
                y1 as f64 + f * (y2 as f64 - y1 as f64) - 3.0,
            )
        });
        let (lx, ly, more) = match placed.first_free(&label, along) {
            Some((lx, ly)) => (lx, ly, ""),
            None => ((x1 + x2) as f64 / 2.0, (y1 + y2) as f64 / 2.0 - 3.0, r#" class="more""#),
        };
        drawn[id] = format!(
            r#"<g class="{}" data-message="{id}" data-lanes="{from_lane} {to_lane}"><title>{}</title><line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}"{dash} marker-end="url(#arrow)"/><text{more} x="{lx:.0}" y="{ly:.0}" text-anchor="middle">{}</text></g>"#,
            class_of(id),
            escape(&format!("{} -> {}: {}", m.from_name, m.to_name, m.text)),
            escape(&label)
        );
    }
    drawn.iter().for_each(|g| s.push_str(g));
    s.push_str(&race_labels);
    for t in &ex.trace {
        let violates = ex.violation.as_ref().is_some_and(|f| f.step == t.step);
        let _ = write!(
            s,
            r##"<g class="step{}" data-step="{}"><text x="8" y="{}" fill="#888">{}</text><circle data-lanes="{}" cx="{}" cy="{}" r="5"/></g>"##,
            if violates { " violating" } else { "" },
            t.step,
            y(t.step) + 4,
            t.step,
            lane(&t.actor_name),
            x(lane(&t.actor_name)),
            y(t.step)
        );
    }
    s.push_str("</svg>");
    s
}

/// One step in the list.
fn step_item(ex: &Explanation, i: usize) -> String {
    let t = &ex.trace[i];
    let mut line = format!("{} {}", t.step, t.actor_name);
    if let Some(h) = &t.handled {
        let _ = write!(line, " handles {}", short(h, 60));
    }
    for (to, m) in &t.sent {
        let _ = write!(line, "; sends {} to {to}", short(m, 40));
    }
    line
}

/// The page (`mcheck replay --format html`): the explained counterexample
/// of `schedule`, self-contained.
///
/// ```
/// use mcheck::models::lostupdate::LostUpdate;
/// use mcheck::{builtin, explain_model, Schedule};
///
/// let text = "mcheck2:lostupdate:p=clients=2,increments=1:bug=1:e=rtc:seed=0:max-steps=10000:v=monitor:at=9:by=counter:msg=all+2+clients+are+done+but+the+counter+is+1+instead+of+2%3A+an+increment+was+lost:d=1:sum=e4fc47ee22c00e30";
/// let schedule: Schedule = text.parse().unwrap();
/// let explained = explain_model(&LostUpdate, builtin("rtc"), &schedule).unwrap();
/// assert!(mcheck::html::page(&explained, &schedule).starts_with("<!DOCTYPE html>"));
/// ```
pub fn page(ex: &Explanation, schedule: &Schedule) -> String {
    let data = json!({
        "steps": ex.trace,
        "views": ex.views,
        "violation": ex.violation,
        "races": ex.races.iter().enumerate().map(|(i, r)| json!({
            "n": i + 1,
            "text": ex.race_text(r),
            "flipped": ex.variant_text(r),
            "responsible": r.responsible(),
        })).collect::<Vec<_>>(),
    });
    // No `<` inside the script element (`</script>`, `<!--`): in JSON it
    // only occurs inside strings, where `\u003c` means the same.
    let data = data.to_string().replace('<', "\\u003c");
    let title = format!("mcheck counterexample: {}", schedule.model);
    let violation = ex
        .violation
        .as_ref()
        .map_or("none".to_string(), |f| format!("{} (step {})", f.violation, f.step));
    let mut steps = String::new();
    // A lasso's cycle (ARCHITECTURE.md, "Liveness"): its first and last steps say so.
    let start = schedule.path.len();
    let end = (!schedule.cycle.is_empty()).then(|| start + schedule.cycle.len() - 1);
    for i in 0..ex.trace.len() {
        let mut item = step_item(ex, i);
        if end.is_some() && i == start {
            item = format!("[cycle starts] {item}");
        }
        if end == Some(i) {
            item.push_str(&format!(
                " [cycle returns to the same state: the one before step {start}]"
            ));
        }
        let _ = write!(steps, r#"<li data-step="{}">{}</li>"#, i + 1, escape(&item));
    }
    // The races that matter first, each keeping its number.
    let mut races = String::new();
    let mut listed: Vec<(usize, _)> = ex.races.iter().enumerate().collect();
    listed.sort_by_key(|(_, r)| !r.responsible());
    for (i, r) in listed {
        let _ = write!(
            races,
            r#"<li value="{}" class="{}"><b>race {}</b>: {}<br>flipped: {}</li>"#,
            i + 1,
            if r.responsible() { "responsible" } else { "" },
            i + 1,
            escape(&ex.race_text(r)),
            escape(&ex.variant_text(r))
        );
    }
    PAGE.replace("{title}", &escape(&title))
        .replace("{schedule}", &escape(&schedule.to_text()))
        .replace("{violation}", &escape(&violation))
        .replace("{verdict}", &escape(&ex.verdict()))
        .replace("{races}", &races)
        .replace("{steps}", &steps)
        .replace("{last}", &ex.trace.len().to_string())
        .replace("{lanes}", &lane_boxes(ex))
        .replace("{diagram}", &diagram(ex))
        .replace("{data}", &data)
}

/// A checkbox per lane of the diagram, to hide a machine, its steps and
/// its messages.
fn lane_boxes(ex: &Explanation) -> String {
    let mut s = String::new();
    for (i, n) in lanes(ex).iter().enumerate() {
        let _ = write!(
            s,
            r#" <label><input type="checkbox" class="lane" data-lane="{i}" checked>{}</label>"#,
            escape(n)
        );
    }
    s
}

/// The page's template: `{name}` fields are filled by [`page`]. The step
/// view is numbered by states: 0 is the initial state, n the state after
/// step n - 1.
const PAGE: &str = r##"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body { font-family: sans-serif; margin: 12px; color: #222; }
h1 { font-size: 18px; margin: 0 0 4px 0; }
code { font-size: 11px; word-break: break-all; }
#top { display: flex; gap: 16px; align-items: flex-start; }
#left { flex: none; max-width: 62%; overflow: auto; max-height: 80vh; border: 1px solid #ddd; }
#lanes { font-size: 12px; margin: 4px 0; }
#diagram text.more { visibility: hidden; }
#diagram g:hover text.more, #diagram.all text.more { visibility: visible; }
#diagram g:hover text { font-weight: bold; }
#right { flex: 1 1 auto; min-width: 320px; }
#diagram .msg line { stroke: #446; }
#diagram .msg text { fill: #446; }
#diagram .race line { stroke: #999; stroke-dasharray: 5,3; }
#diagram .race.responsible line { stroke: #e67e00; stroke-width: 2.5; stroke-dasharray: none; }
#diagram .race.responsible text, #diagram .racelabel.responsible { fill: #c46400; font-weight: bold; }
#diagram .racelabel { fill: #777; }
#diagram .step circle { fill: #446; }
#diagram .step.current circle { fill: #2a7; r: 8; }
#diagram .step.done circle { fill: #9bd; }
#diagram .step.violating circle { fill: #d00; r: 8; }
table { border-collapse: collapse; font-size: 12px; width: 100%; }
td, th { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }
.changed { background: #fff3b0; }
#violation { background: #fdd; border: 1px solid #d00; padding: 6px; margin: 6px 0; }
#violation[hidden] { display: none; }
#steps { font-size: 12px; max-height: 180px; overflow: auto; margin: 4px 0; padding-left: 0; list-style: none; }
#steps li { cursor: pointer; padding: 1px 4px; }
#steps li.current { background: #cfe; }
#races li.responsible { color: #a05000; }
#verdict { white-space: pre-line; }
#slider { width: 100%; }
</style></head>
<body>
<h1>{title}</h1>
<div>Schedule: <code>{schedule}</code></div>
<div>Violation: <b>{violation}</b></div>
<div id="lanes">Machines:{lanes} <span id="overlaps" hidden></span></div>
<div id="top">
<div id="left">{diagram}</div>
<div id="right">
<div><label for="slider">State after step: <b id="stepno">0</b> of {last}</label>
<input type="range" id="slider" min="0" max="{last}" value="0">
<button id="prev">&lt;</button> <button id="next">&gt;</button> <button id="lastbtn">last</button></div>
<div id="stepinfo"></div>
<div id="violation" hidden></div>
<table id="machines"><thead><tr><th>machine</th><th>state</th><th>inbox</th></tr></thead><tbody></tbody></table>
<div>Monitors: <code id="monitors"></code></div>
<ol id="steps"><li data-step="0">initial state</li>{steps}</ol>
</div></div>
<h2>Races</h2>
<p id="verdict">{verdict}</p>
<ol id="races">{races}</ol>
<script id="data" type="application/json">{data}</script>
<script>
(function () {
  var D = JSON.parse(document.getElementById("data").textContent);
  var last = D.steps.length;
  var slider = document.getElementById("slider");
  function text(el, s) { el.textContent = s; return el; }
  function cell(row, s, changed) {
    var td = text(document.createElement("td"), s);
    if (changed) td.className = "changed";
    row.appendChild(td);
  }
  function inbox(a) {
    var all = a.inbox.slice();
    a.unordered.forEach(function (m) { all.push(m + " (unordered)"); });
    return all.join(", ");
  }
  function show(n) {
    n = Math.max(0, Math.min(last, n));
    slider.value = n;
    text(document.getElementById("stepno"), n);
    var v = D.views[n] || D.views[D.views.length - 1];
    var before = D.views[n > 0 ? n - 1 : 0];
    var body = document.querySelector("#machines tbody");
    body.innerHTML = "";
    v.actors.forEach(function (a, i) {
      var b = before.actors[i];
      var row = document.createElement("tr");
      cell(row, a.name + (a.halted ? " (halted)" : "") + (a.choosing ? " (choosing)" : ""), !b);
      cell(row, a.state, n > 0 && (!b || b.state !== a.state));
      cell(row, inbox(a), n > 0 && (!b || inbox(b) !== inbox(a)));
      body.appendChild(row);
    });
    var mon = text(document.getElementById("monitors"), v.monitors);
    mon.className = n > 0 && before.monitors !== v.monitors ? "changed" : "";
    var info = document.getElementById("stepinfo");
    if (n === 0) { text(info, "The initial state."); }
    else {
      var t = D.steps[n - 1];
      var s = "Step " + t.step + ": " + t.actor_name;
      if (t.handled) s += " handles " + t.handled;
      if (t.state_before && t.state_after && t.state_before !== t.state_after) s += " [" + t.state_before + " -> " + t.state_after + "]";
      t.sent.forEach(function (p) { s += "; sends " + p[1] + " to " + p[0]; });
      t.created.forEach(function (c) { s += "; creates " + c; });
      t.notes.forEach(function (c) { s += "; " + c; });
      text(info, s);
    }
    var vio = document.getElementById("violation");
    var at = D.violation ? D.violation.step + 1 : -1;
    if (D.violation && n >= Math.min(at, last)) {
      var m = D.violation.kind + (D.violation.machine ? " in " + D.violation.machine : "") + ": " + D.violation.message;
      text(vio, "VIOLATION at step " + D.violation.step + ": " + m);
      vio.hidden = false;
    } else { vio.hidden = true; }
    document.querySelectorAll("#diagram .step").forEach(function (g) {
      var k = +g.getAttribute("data-step");
      g.classList.toggle("current", k === n - 1);
      g.classList.toggle("done", k < n - 1);
    });
    document.querySelectorAll("#steps li").forEach(function (li) {
      li.classList.toggle("current", +li.getAttribute("data-step") === n);
    });
  }
  function fromHash() {
    var m = /step=(last|\d+)/.exec(location.hash);
    return m ? (m[1] === "last" ? last : +m[1]) : 0;
  }
  slider.addEventListener("input", function () { show(+slider.value); });
  document.getElementById("prev").onclick = function () { show(+slider.value - 1); };
  document.getElementById("next").onclick = function () { show(+slider.value + 1); };
  document.getElementById("lastbtn").onclick = function () { show(last); };
  document.querySelectorAll("#steps li").forEach(function (li) {
    li.onclick = function () { show(+li.getAttribute("data-step")); };
  });
  document.querySelectorAll("#diagram .step").forEach(function (g) {
    g.onclick = function () { show(+g.getAttribute("data-step") + 1); };
  });
  window.addEventListener("hashchange", function () { show(fromHash()); });
  var boxes = document.querySelectorAll("#lanes input.lane");
  function hideLanes() {
    var off = {};
    boxes.forEach(function (b) { if (!b.checked) off[b.getAttribute("data-lane")] = true; });
    document.querySelectorAll("#diagram [data-lanes]").forEach(function (el) {
      var hide = el.getAttribute("data-lanes").split(" ").some(function (l) { return off[l]; });
      el.style.display = hide ? "none" : "";
    });
  }
  boxes.forEach(function (b) { b.onchange = hideLanes; });
  // #hide=0,4 starts with those lanes hidden.
  var hidden = /hide=([\d,]+)/.exec(location.hash);
  if (hidden) {
    hidden[1].split(",").forEach(function (l) {
      boxes.forEach(function (b) { if (b.getAttribute("data-lane") === l) b.checked = false; });
    });
    hideLanes();
  }
  // #labels=all shows every label, even those kept for hover.
  var svg = document.getElementById("diagram");
  if (/labels=all/.test(location.hash)) svg.classList.add("all");
  // The number of pairs of visible labels whose boxes overlap, as the
  // browser lays them out (tests/all/browser.rs reads it).
  var seen = [];
  svg.querySelectorAll("text").forEach(function (t) {
    if (getComputedStyle(t).visibility === "hidden") return;
    var b = t.getBBox();
    if (b.width > 0) seen.push(b);
  });
  var overlaps = 0;
  seen.forEach(function (a, i) {
    seen.slice(i + 1).forEach(function (b) {
      if (a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height) overlaps++;
    });
  });
  text(document.getElementById("overlaps"), overlaps + " overlapping labels");
  show(fromHash());
})();
</script>
</body></html>
"##;

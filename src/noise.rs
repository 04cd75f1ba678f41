//! `mcheck table --noise`: the noise benchmark. Rows are the bugs of
//! [`mcheck_models::noise::ROWS`], each a race that happens once per
//! execution, at several sizes of its noise parameter (independent
//! background clients and their stores); columns and cells are the deep
//! table's ([`crate::deep::build_row`]): every technique under the same
//! budget, Kaplan-Meier medians, and per row the log-rank test of the
//! best delaying technique against the best baseline.

use crate::deep::{self, DeepArgs, DeepRow};
use crate::registry::{DynModel, Registry};
use crate::scaling::Record;
use mcheck_checker::BugSpec;
use mcheck_models::noise::{NOISE_PARAM, NoiseRow, ROWS};

/// The rows `models` and `bugs` select (empty: all), in [`ROWS`]' order,
/// each with its model and bug; an error names a model or bug the
/// benchmark does not have, with the ones it has.
pub fn selected<'r>(
    registry: &'r Registry,
    models: &[String],
    bugs: &[u32],
) -> Result<Vec<(&'static NoiseRow, &'r dyn DynModel, BugSpec)>, String> {
    let valid = || {
        ROWS.iter()
            .map(|r| format!("{} bug {}", r.model, r.bug))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for m in models {
        if !ROWS.iter().any(|r| r.model == m) {
            return Err(format!("the noise benchmark has no model {m:?}; its rows: {}", valid()));
        }
    }
    let picked: Vec<&NoiseRow> = ROWS
        .iter()
        .filter(|r| models.is_empty() || models.iter().any(|m| m == r.model))
        .filter(|r| bugs.is_empty() || bugs.contains(&r.bug))
        .collect();
    if picked.is_empty() {
        return Err(format!(
            "no row of the noise benchmark matches --models and --bugs; its rows: {}",
            valid()
        ));
    }
    picked
        .into_iter()
        .map(|row| {
            let model = registry.model(row.model).map_err(|e| e.to_string())?;
            let bug = model
                .info()
                .bugs
                .into_iter()
                .find(|b| b.id == row.bug)
                .ok_or_else(|| format!("{} has no bug {}", row.model, row.bug))?;
            Ok((row, model, bug))
        })
        .collect()
}

/// `--sizes`: whole numbers, each within the noise parameter's range
/// (`max`); the error names the bad value and the range.
pub fn parse_sizes(text: &str, max: u64) -> Result<Vec<u64>, String> {
    let sizes = text
        .split(',')
        .map(|v| match v.trim().parse::<u64>() {
            Ok(n) if n <= max => Ok(n),
            _ => Err(format!("--sizes takes whole numbers from 0 to {max}, not {v:?}")),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(sizes)
}

/// The parameters of `row` at noise `size`, in `--set` syntax.
pub fn set_at(row: &NoiseRow, size: u64) -> Vec<String> {
    vec![row.params.to_string(), format!("{}={size}", row.param)]
}

/// Build the table: every selected row at every size of `sizes`, in that
/// order, handing each row to `on_row` as soon as it is done. When
/// `args.stop` is raised the row in progress is dropped and the rows done
/// so far are returned.
pub fn build(
    registry: &Registry,
    args: &DeepArgs,
    sizes: &[u64],
    mut on_row: impl FnMut(&DeepRow),
) -> Result<Vec<DeepRow>, String> {
    let cols = deep::columns();
    let mut rows = Vec::new();
    for (row, model, bug) in selected(registry, &args.models, &args.bugs)? {
        for &size in sizes {
            let Some(done) = deep::build_row("table --noise", model, &bug, &set_at(row, size), &cols, args)? else {
                return Ok(rows);
            };
            on_row(&done);
            rows.push(done);
        }
    }
    Ok(rows)
}

/// The rows of one benchmark row (`model`'s bug `bug`) as the scaling
/// experiment's records ([`crate::scaling::Record`]), a size per row and
/// a record per column, for its plot (`plot::svg`).
pub fn records(rows: &[DeepRow], model: &str, bug: u32) -> Vec<Record> {
    let cols = deep::columns();
    rows.iter()
        .filter(|r| r.model == model && r.bug == bug)
        .flat_map(|r| {
            let size = size_of(r).unwrap_or(0);
            cols.iter().map(move |c| Record {
                size,
                params: r.params.clone(),
                mean_steps: r.mean_steps,
                technique: c.name.to_string(),
                unit: if c.exhaustive { "states" } else { "schedules" },
                cell: r.cells[c.name].clone(),
            })
        })
        .collect()
}

/// Draw a plot per benchmark row of `rows` into the directory `dir`
/// (`MODEL-BUG.svg`: counts to the bug against the mean execution length,
/// one line per column, a point per size); the paths written.
pub fn plots(rows: &[DeepRow], dir: &str, cap: u64) -> Result<Vec<String>, String> {
    let names: Vec<&str> = deep::columns().iter().map(|c| c.name).collect();
    let mut written = Vec::new();
    for row in ROWS {
        let records = records(rows, row.model, row.bug);
        if records.is_empty() {
            continue;
        }
        let path = format!("{}/{}-{}.svg", dir.trim_end_matches('/'), row.model, row.bug);
        let title = format!("{} bug {}: to the bug as the noise actors grow", row.model, row.bug);
        crate::plot::svg(&path, &title, &names, &records, cap)?;
        written.push(path);
    }
    Ok(written)
}

/// The noise size a row ran with.
fn size_of(r: &DeepRow) -> Option<u64> {
    let prefix = format!("{NOISE_PARAM}=");
    r.params
        .split(',')
        .find_map(|kv| kv.strip_prefix(&prefix)?.parse().ok())
}

/// A row's bug and its noise size, the label of the tables under the
/// rows: `2 (noise=64)`.
pub fn label(r: &DeepRow) -> String {
    let size = size_of(r).map_or("-".into(), |s| s.to_string());
    format!("{} ({NOISE_PARAM}={size})", r.bug)
}

/// What follows the rows: the legend, what each bug mirrors, then the
/// deep table's results ([`deep::markdown_results`]) labelled by size.
pub fn markdown_tail(rows: &[DeepRow]) -> String {
    let mut out = format!(
        "\n{} The noise parameter adds that many independent background clients, each putting values to a key of another shard on a store of its own (`mcheck_models::noise`): their traffic cannot affect the bug.\n\nThe rows' races:\n\n",
        deep::legend()
    );
    for r in ROWS {
        out.push_str(&format!("* {} bug {} ({}): {}.\n", r.model, r.bug, r.params, r.mirrors));
    }
    out.push('\n');
    out + &deep::markdown_results(rows, label)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_whole_numbers_in_range() {
        assert_eq!(parse_sizes("1, 4,64", 128), Ok(vec![1, 4, 64]));
        for bad in ["x", "-1", "129", "1,,2"] {
            let err = parse_sizes(bad, 128).unwrap_err();
            assert!(err.contains("from 0 to 128"), "{bad:?}: {err}");
        }
    }

    #[test]
    fn rows_select_by_model_and_bug() {
        let registry = Registry::builtin();
        let all = selected(&registry, &[], &[]).unwrap();
        assert_eq!(all.len(), ROWS.len());
        let paxos = selected(&registry, &["paxos".into()], &[]).unwrap();
        assert!(
            paxos
                .iter()
                .all(|(r, m, b)| r.model == "paxos" && m.info().name == "paxos" && b.id == r.bug)
        );
        let err = selected(&registry, &["lostupdate".into()], &[])
            .map(|_| ())
            .unwrap_err();
        assert!(err.contains("\"lostupdate\"") && err.contains("paxos bug 2"), "{err}");
        let err = selected(&registry, &["paxos".into()], &[9]).map(|_| ()).unwrap_err();
        assert!(err.contains("no row"), "{err}");
        assert_eq!(set_at(&ROWS[1], 16), vec!["proposals=1".to_string(), "noise=16".into()]);
    }
}

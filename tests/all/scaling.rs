//! `mcheck scaling` end to end on a tiny run: one JSON record per (size,
//! technique) that agrees with `mcheck run` of the same technique and
//! seeds, and an SVG file that is well-formed XML with one line per
//! technique.

use crate::common::{Scratch, json, mcheck, mean_walk};

/// A minimal XML well-formedness check, independent of the plotting crate:
/// every element closes in order, attributes are quoted, one root. Returns
/// the element names in document order.
fn xml_elements(text: &str) -> Result<Vec<String>, String> {
    let mut open: Vec<String> = Vec::new();
    let mut names = Vec::new();
    let mut roots = 0;
    let mut rest = text.trim_start();
    while let Some(i) = rest.find('<') {
        if open.is_empty() && !rest[..i].trim().is_empty() {
            return Err(format!("text outside the root: {:?}", &rest[..i]));
        }
        rest = &rest[i..];
        let skip = [("<?", "?>"), ("<!--", "-->"), ("<!", ">")]
            .into_iter()
            .find(|(start, _)| rest.starts_with(start));
        if let Some((_, end)) = skip {
            let j = rest.find(end).ok_or("unterminated declaration")?;
            rest = &rest[j + end.len()..];
            continue;
        }
        // A tag: find its end outside quoted attribute values.
        let mut quote = None;
        let end = rest
            .char_indices()
            .skip(1)
            .find(|&(_, c)| match quote {
                Some(q) if c == q => {
                    quote = None;
                    false
                }
                Some(_) => false,
                None if c == '"' || c == '\'' => {
                    quote = Some(c);
                    false
                }
                None => c == '>',
            })
            .map(|(j, _)| j)
            .ok_or("unterminated tag")?;
        let tag = &rest[1..end];
        rest = &rest[end + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            match open.pop() {
                Some(o) if o == name.trim() => {}
                o => return Err(format!("</{name}> closes {o:?}")),
            }
            continue;
        }
        let name: String = tag.chars().take_while(|c| !c.is_whitespace() && *c != '/').collect();
        if name.is_empty() {
            return Err(format!("a tag without a name: <{tag}>"));
        }
        let attrs = tag[name.len()..].trim_end_matches('/');
        // name="value" pairs, nothing else.
        let mut a = attrs.trim();
        while !a.is_empty() {
            let eq = a
                .find('=')
                .ok_or_else(|| format!("attribute without a value in <{tag}>"))?;
            let q = a[eq + 1..].chars().next().ok_or("missing value")?;
            if q != '"' && q != '\'' {
                return Err(format!("unquoted attribute in <{tag}>"));
            }
            let close = a[eq + 2..].find(q).ok_or("unterminated value")?;
            a = a[eq + 2 + close + 1..].trim_start();
        }
        if open.is_empty() {
            roots += 1;
        }
        names.push(name.clone());
        if !tag.ends_with('/') {
            open.push(name);
        }
    }
    if !open.is_empty() || roots != 1 || !rest.trim().is_empty() {
        return Err(format!("unclosed {open:?}, {roots} roots, trailing {rest:?}"));
    }
    Ok(names)
}

#[test]
fn the_xml_check_rejects_what_is_not_xml() {
    assert_eq!(
        xml_elements("<?xml version=\"1.0\"?>\n<svg a=\"1\"><g><line x='2'/></g><text>hi</text></svg>\n"),
        Ok(vec!["svg".into(), "g".into(), "line".into(), "text".into()])
    );
    for bad in [
        "<svg><g></svg>",
        "<svg></svg><svg></svg>",
        "<svg a=1></svg>",
        "<svg a=\"1></svg>",
        "<svg>",
        "x<svg/>",
    ] {
        assert!(xml_elements(bad).is_err(), "{bad}");
    }
}

/// The tiny run: lostupdate's blind write at 1 and 2 increments per
/// client, three techniques, two seeds, schedule budgets only (the time
/// budget is far away).
#[test]
fn scaling_writes_a_record_per_size_and_technique_and_a_plot() {
    let scratch = Scratch::new("scaling");
    let dir = scratch.dir();
    let svg = dir.join("plot.svg");
    let svg = svg.to_str().unwrap();
    let v = json(&[
        "scaling",
        "lostupdate",
        "--bug",
        "1",
        "--param",
        "increments=1,2",
        "--set",
        "clients=2",
        "--techniques",
        "rs,pct,ss-rtc",
        "--runs",
        "2",
        "--budget-s",
        "60",
        "--max-schedules",
        "500",
        "-j",
        "2",
        "--svg",
        svg,
        "--json",
        "-q",
    ]);
    assert_eq!(v["techniques"], serde_json::json!(["RS", "PCT", "SS-RTC"]));
    assert_eq!(v["sizes"], serde_json::json!([1, 2]));
    let records = v["records"].as_array().expect("records");
    let keys: Vec<(u64, &str)> = records
        .iter()
        .map(|r| (r["size"].as_u64().unwrap(), r["technique"].as_str().unwrap()))
        .collect();
    assert_eq!(
        keys,
        [
            (1, "RS"),
            (1, "PCT"),
            (1, "SS-RTC"),
            (2, "RS"),
            (2, "PCT"),
            (2, "SS-RTC")
        ]
    );
    for r in records {
        assert_eq!(r["runs"], 2, "{r}");
        assert_eq!(r["unit"], "schedules", "{r}");
        let size = r["size"].as_u64().unwrap();
        assert_eq!(r["params"], format!("clients=2,increments={size}"), "{r}");
        // The oracle: `mcheck run` of the technique with each seed, and the
        // mean length from 100 random walks of the bug-free program.
        let technique = r["technique"].as_str().unwrap();
        let strategy: &[&str] = match technique {
            "RS" => &["-s", "rs"],
            "PCT" => &["-s", "pct"],
            _ => &["-s", "ss", "-e", "rtc"],
        };
        let set = format!("clients=2,increments={size}");
        let counts: Vec<u64> = (0..2)
            .map(|seed| {
                let seed = seed.to_string();
                let mut args = vec!["run", "lostupdate", "--bug", "1", "--set", &set, "--seed", &seed];
                args.extend(strategy);
                args.extend(["--max-schedules", "500", "-j", "1", "--json", "-q"]);
                let run = json(&args);
                assert_eq!(run["outcome"], "violation", "{technique} {size} {run}");
                run["schedules"].as_u64().unwrap()
            })
            .collect();
        // Both seeds found it: the Kaplan-Meier median of two is their mean.
        let mean = (counts[0] + counts[1]) as f64 / 2.0;
        assert_eq!(r["count"]["median"].as_f64(), Some(mean), "{r}");
        assert_eq!(r["found_runs"], 2, "{r}");
        let mean = mean_walk("lostupdate", &set);
        assert_eq!(r["mean_steps"].as_f64(), Some(mean), "{r}");
    }
    // The executions grow with the workload.
    assert!(records[3]["mean_steps"].as_f64() > records[0]["mean_steps"].as_f64());

    let text = std::fs::read_to_string(svg).expect("the SVG file");
    let elements = xml_elements(&text).unwrap_or_else(|e| panic!("not XML: {e}\n{text}"));
    assert_eq!(elements[0], "svg");
    // One coloured polyline per technique (the black ones are the axes and
    // the legend's frame).
    let lines = text
        .split("<polyline")
        .skip(1)
        .filter(|p| !p[..p.find('>').unwrap_or(p.len())].contains("stroke=\"#000000\""))
        .count();
    assert_eq!(lines, 3, "{text}");
    for name in ["RS", "PCT", "SS-RTC", "mean execution length"] {
        assert!(text.contains(&format!(">\n{name}")), "{name}: {text}");
    }
}

/// Bad input is named with the valid values, before any work.
#[test]
fn scaling_names_bad_input() {
    for (args, needle) in [
        (&["--param", "increments"][..], "NAME=V1,V2"),
        (&["--param", "frob=1,2"][..], "frob"),
        (
            &["--param", "increments=1", "--techniques", "zz"][..],
            "valid techniques: RS",
        ),
    ] {
        let o = mcheck(&[&["scaling", "lostupdate", "--bug", "1"][..], args].concat());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

//! Bad input never crashes mcheck: random argument vectors and random
//! (mutated) schedule strings and files give exit 0, 1 or 2, never a panic
//! (exit 101), and every exit 2 says why: in exactly one line, or in
//! clap's full message for arguments clap rejects.

use crate::common::{Scratch, mcheck};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

fn check(args: &[String]) -> i32 {
    let o = mcheck(args);
    let code = o.status.code().unwrap_or(-1);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(matches!(code, 0..=2), "exit {code} for {args:?}: {err}");
    if code == 2 {
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        // clap's errors, and its help when no command is given.
        let clap = (lines.first().is_some_and(|l| l.starts_with("error: "))
            || lines.iter().any(|l| l.starts_with("Usage: mcheck")))
            && err.contains("--help");
        if !clap {
            assert_eq!(lines.len(), 1, "not one line for {args:?}: {err}");
            assert!(lines[0].starts_with("mcheck: "), "{args:?}: {err}");
        }
    }
    code
}

const WORDS: &[&str] = &[
    "run",
    "replay",
    "shrink",
    "list",
    "lostupdate",
    "nosuchmodel",
    "--bug",
    "1",
    "0",
    "7",
    "-1",
    "x",
    "--set",
    "clients=2",
    "clients=99",
    "clients=",
    "=3",
    "bogus=1",
    "-e",
    "rr",
    "rtc",
    "prr",
    "nope",
    "-s",
    "ses",
    "dfs",
    "pb",
    "rs",
    "irs",
    "pct",
    "zzz",
    "--max-delays",
    "--max-steps",
    "--time-limit",
    "--max-states",
    "--max-schedules",
    "--cache-mb",
    "--max-memory-mb",
    "--seed",
    "-j",
    "--shard",
    "1/2",
    "2/2",
    "a/b",
    "--deadlock",
    "--json",
    "-q",
    "--pct-depth",
    "--pct-steps",
    "--irs-step",
    "--format",
    "mermaid",
    "dot",
    "svg",
    "NaN",
    "1e400",
    "18446744073709551616",
    "",
    " ",
    "--",
    "-",
    "--verbose",
    "\u{1F600}",
    "mcheck1:",
    "{",
    "--shrink",
    "--max-attempts",
];

#[test]
fn random_argument_vectors() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2026);
    let mut exits = [0u32; 3];
    for _ in 0..300 {
        let n = rng.random_range(0..7);
        let mut args: Vec<String> = (0..n)
            .map(|_| WORDS[rng.random_range(0..WORDS.len())].to_string())
            .collect();
        if rng.random_bool(0.5) {
            args.insert(0, "run".into());
            args.insert(1, "lostupdate".into());
            if rng.random_bool(0.4) {
                args.insert(2, "--bug".into());
                args.insert(3, "1".into());
            }
        }
        if args.first().map(String::as_str) == Some("run") {
            // Keep accidental valid runs short, with the budget that
            // applies to the strategy (the other one is rejected).
            let sampling = args
                .windows(2)
                .any(|w| w[0] == "-s" && ["rs", "irs", "pct"].contains(&w[1].as_str()));
            let budget = if sampling {
                ["--max-schedules", "300"]
            } else {
                ["--max-states", "3000"]
            };
            args.extend(["--time-limit", "0.3", budget[0], budget[1], "-q"].map(String::from));
        }
        exits[check(&args) as usize] += 1;
    }
    // The generator reaches every outcome.
    assert!(exits.iter().all(|&n| n > 0), "{exits:?}");
}

#[test]
fn random_schedule_strings_and_files() {
    let good = "mcheck1:lostupdate:p=clients=3,increments=3:bug=1:e=rtc:seed=0:max-steps=10000:d=1";
    assert_eq!(check(&["replay".into(), good.into()]), 1);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let alphabet: Vec<char> = "mcheck1:=,.|-pdbusx0123456789{}\"[]lostupdate\u{e9}".chars().collect();
    let scratch = Scratch::new("fuzz");
    for i in 0..300 {
        let mut s: Vec<char> = good.chars().collect();
        for _ in 0..rng.random_range(1..4) {
            match rng.random_range(0..4) {
                0 if !s.is_empty() => {
                    let at = rng.random_range(0..s.len());
                    s.remove(at);
                }
                1 => {
                    let at = rng.random_range(0..=s.len());
                    s.insert(at, alphabet[rng.random_range(0..alphabet.len())]);
                }
                2 if !s.is_empty() => {
                    let at = rng.random_range(0..s.len());
                    s[at] = alphabet[rng.random_range(0..alphabet.len())];
                }
                _ => {
                    let at = rng.random_range(0..=s.len());
                    s.truncate(at);
                }
            }
        }
        let text: String = s.into_iter().collect();
        let arg = if i % 3 == 0 {
            let f = scratch.file(&format!("s{i}.json"));
            let body = if i % 2 == 0 {
                text.clone()
            } else {
                format!("{{\"version\":1,\"model\":\"lostupdate\",\"path\":[{}]}}", text.len())
            };
            std::fs::write(&f, body).unwrap();
            f.to_str().unwrap().to_string()
        } else {
            text
        };
        let cmd = if i % 5 == 0 { "shrink" } else { "replay" };
        check(&[cmd.into(), arg, "--format".into(), "text".into()][..if cmd == "shrink" { 2 } else { 4 }]);
    }
}

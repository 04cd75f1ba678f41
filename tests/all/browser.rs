//! The counterexample page in a real browser: `mcheck replay FILE --format
//! html` of a saved counterexample, opened in headless Chromium; the test
//! reads the browser's own DOM after the page's script ran and checks that
//! the diagram and the step view are there and that moving to the last
//! step (`#step=last`) shows the violation. It also takes the README's
//! screenshot (written to docs/ when `MCHECK_UPDATE_DOCS=1`).
//!
//! Chromium: `$MCHECK_CHROMIUM`, else `/usr/bin/chromium` (Debian's
//! package, which `.ci/run` installs when missing). Without it the test
//! fails under CI (`CI` set) and is skipped with a loud message elsewhere.

use crate::common::{Scratch, mcheck};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The browser, if there is one.
fn chromium() -> Option<PathBuf> {
    let candidates = [
        std::env::var("MCHECK_CHROMIUM").unwrap_or_default(),
        "/usr/bin/chromium".into(),
        "/usr/bin/chromium-browser".into(),
    ];
    candidates
        .into_iter()
        .filter(|c| !c.is_empty())
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

/// The browser, or `None` after a loud message that `test` is skipped;
/// under CI (`CI` set) a missing browser fails the test.
fn chromium_or_skip(test: &str) -> Option<PathBuf> {
    let found = chromium();
    if found.is_none() {
        let message = "no Chromium (install it: apt-get install -y chromium; .ci/run does)";
        if std::env::var_os("CI").is_some() {
            panic!("{message}");
        }
        eprintln!("\n!!!!!!!! SKIPPED {test}: {message} !!!!!!!!\n");
    }
    found
}

/// Run headless Chromium on `url` with `args`, at most 60 seconds; its
/// standard output.
fn headless(browser: &Path, profile: &Path, args: &[&str], url: &str) -> String {
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    // Read stdout as it comes: a DOM larger than the pipe's buffer would
    // otherwise block the browser until it is killed.
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut out).map(|_| out)
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("chromium did not finish within 60 s on {url}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "chromium failed on {url}: {status:?}");
    reader.join().unwrap().expect("chromium's output is text")
}

/// The text of the element with id `id` in `dom` (up to its first child
/// element or closing tag).
fn text_of<'a>(dom: &'a str, id: &str) -> Option<&'a str> {
    let at = dom.find(&format!("id=\"{id}\""))?;
    let rest = &dom[at..];
    let start = rest.find('>')? + 1;
    let end = rest[start..].find('<')? + start;
    Some(&rest[start..end])
}

#[test]
fn the_page_renders_in_chromium() {
    let scratch = Scratch::new("browser");
    let dir = scratch.dir();
    let saved = dir.join("cex.json");
    let saved = saved.to_str().unwrap();
    let o = mcheck(&[
        "run",
        "lostupdate",
        "--bug",
        "1",
        "--set",
        "clients=2,increments=1",
        "--save",
        saved,
    ]);
    assert_eq!(o.status.code(), Some(1));
    let o = mcheck(&["replay", saved, "--format", "html"]);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let page = String::from_utf8(o.stdout).unwrap();
    // Self-contained: no external scripts, styles, images or fonts.
    for external in [
        "<script src",
        "<link",
        "@import",
        "url(http",
        "src=\"http",
        "href=\"http",
    ] {
        assert!(
            !page.contains(external),
            "the page refers to something outside: {external}"
        );
    }
    let html = dir.join("cex.html");
    std::fs::write(&html, &page).unwrap();
    let Some(browser) = chromium_or_skip("the_page_renders_in_chromium") else {
        return;
    };
    let url = format!("file://{}", html.display());
    let profile = dir.join("profile");
    // The replay of this counterexample: 10 steps (0..=9), violation at 9.
    let steps = page.matches("<li data-step=").count() - 1;
    assert_eq!(steps, 10);

    // The first state: the diagram, the step view, no violation shown.
    let dom = headless(&browser, &profile, &["--dump-dom"], &url);
    assert!(dom.contains("<svg id=\"diagram\""), "no diagram");
    assert_eq!(dom.matches("<g class=\"step").count(), steps, "one dot per step");
    assert_eq!(text_of(&dom, "stepno"), Some("0"));
    // The script filled the machine table: client1, client2, server0 and
    // its inbox (the set-up's Go messages queued for the clients).
    let rows = dom.matches("<tr><td").count();
    assert_eq!(rows, 3, "one row per machine");
    assert!(
        dom.contains("<div id=\"violation\" hidden=\"\""),
        "violation hidden at step 0"
    );

    // The last step: the violation, the step highlighted in the diagram,
    // changed cells marked.
    let dom = headless(&browser, &profile, &["--dump-dom"], &format!("{url}#step=last"));
    assert_eq!(text_of(&dom, "stepno"), Some(steps.to_string().as_str()));
    let violation = text_of(&dom, "violation").unwrap();
    assert!(
        violation.starts_with("VIOLATION at step 9: monitor in counter"),
        "{violation}"
    );
    assert!(
        dom.contains("class=\"step violating current\""),
        "the last step is current"
    );
    assert!(dom.contains("class=\"changed\""), "what changed is highlighted");
    assert!(dom.contains("class=\"race responsible\""), "the race is marked");

    // The screenshot for the README.
    let shot = dir.join("counterexample.png");
    headless(
        &browser,
        &profile,
        &[&format!("--screenshot={}", shot.display()), "--window-size=1200,900"],
        &format!("{url}#step=last"),
    );
    let png = std::fs::read(&shot).expect("a screenshot");
    assert_eq!(&png[1..4], b"PNG");
    let size = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
    assert_eq!((size(16), size(20)), (1200, 900), "IHDR width and height");
    update_docs(&shot, "counterexample.png");
}

/// With `MCHECK_UPDATE_DOCS=1`, copy `shot` to docs/`name`.
fn update_docs(shot: &Path, name: &str) {
    if std::env::var_os("MCHECK_UPDATE_DOCS").is_some() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
        std::fs::create_dir_all(&docs).unwrap();
        std::fs::copy(shot, docs.join(name)).unwrap();
    }
}

/// The longest shipped counterexample, Raft bug 1's (30 steps, 35
/// messages, 42 races, five machines).
const RAFT_1: &str = "mcheck2:raft:p=crashes=1,duplicates=1,elections=3,network=2,reads=0,requests=1,servers=3:bug=1:e=rtc:seed=0:max-steps=10000:v=monitor:at=29:by=leader-completeness:msg=leader+server1+of+term+4+lacks+the+entry+%28t1+c1%29+at+index+1+that+leader+server0+committed+in+term+3%3B+it+holds+%28t2+c1%29+there:d=0.3.3.6.10.1.3:sum=7c8ab413f95ab25e";

/// Raft bug 1's page stays legible: as the browser lays it out, no two
/// visible labels overlap, and all but one message label is visible (the
/// last on hover); showing every label (`#labels=all`) does overlap, so
/// the count would see a layout that fails; a hidden lane hides its
/// steps and messages. Takes docs/counterexample-raft.png.
#[test]
fn the_raft_page_has_no_overlapping_labels() {
    let scratch = Scratch::new("browser-raft");
    let dir = scratch.dir();
    let o = mcheck(&["replay", RAFT_1, "--format", "html"]);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let page = String::from_utf8(o.stdout).unwrap();
    assert_eq!(page.matches("data-message=").count(), 35, "one arrow per message");
    assert_eq!(page.matches(r#"<text class="more""#).count(), 1, "labels on hover only");
    let html = dir.join("raft.html");
    std::fs::write(&html, &page).unwrap();
    let Some(browser) = chromium_or_skip("the_raft_page_has_no_overlapping_labels") else {
        return;
    };
    let url = format!("file://{}", html.display());
    let profile = dir.join("profile");
    let overlaps = |fragment: &str| {
        let dom = headless(&browser, &profile, &["--dump-dom"], &format!("{url}{fragment}"));
        text_of(&dom, "overlaps").map(str::to_string)
    };
    assert_eq!(overlaps("#step=last").as_deref(), Some("0 overlapping labels"));
    assert_eq!(overlaps("#labels=all").as_deref(), Some("1 overlapping labels"));

    // Lane 3 (client3) hidden: its header, steps and messages, and
    // nothing else.
    let in_lane_3 = page
        .split(r#"data-lanes=""#)
        .skip(1)
        .filter(|rest| rest[..rest.find('"').unwrap()].split(' ').any(|l| l == "3"))
        .count();
    assert_eq!(in_lane_3, 12, "client3's header, 3 steps, 2 race labels and 6 messages");
    let dom = headless(&browser, &profile, &["--dump-dom"], &format!("{url}#hide=3"));
    assert_eq!(dom.matches(r#"style="display: none;""#).count(), in_lane_3);

    let shot = dir.join("counterexample-raft.png");
    headless(
        &browser,
        &profile,
        &[&format!("--screenshot={}", shot.display()), "--window-size=1400,1000"],
        &format!("{url}#step=last"),
    );
    assert_eq!(&std::fs::read(&shot).expect("a screenshot")[1..4], b"PNG");
    update_docs(&shot, "counterexample-raft.png");
}

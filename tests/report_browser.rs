//! The HTML report in a real browser: a real `cipherbench run` writes its report,
//! headless Chromium (Debian's package) lays it out at a phone's width (390 px) and
//! a laptop's (1280 px), and the page must show the answer in the first screen and
//! never scroll sideways. Skipped, with a message, when Chromium is not installed
//! (`scripts/ensure-deps.sh test` installs it).
//!
//! The report has no scripts, and `--dump-dom` lays pages out in a window no
//! narrower than 500 px, so the measuring is done by a harness page used only here:
//! it holds the report twice, in `srcdoc` iframes of exactly 390×844 and 1280×800
//! (the iframe is the viewport the report lays out in), measures both once loaded
//! and writes the figures into its own DOM, which `--dump-dom` prints. Screenshots
//! of the report itself at both widths are left in `target/report-screens/` to look at.

mod common;

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"].iter().find_map(|n| {
        std::env::var_os("PATH")?
            .to_str()?
            .split(':')
            .map(|d| Path::new(d).join(n))
            .find(|p| p.is_file())
    })
}

/// Runs headless Chromium with `args` plus `url`, bounded in time; returns stdout
/// (through a file: the DOM is larger than a pipe holds).
fn browse(chrome: &Path, profile: &Path, args: &[&str], url: &str) -> String {
    let out_path = profile.with_extension("stdout");
    let mut child = std::process::Command::new(chrome)
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
            "--allow-file-access-from-files",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    String::from_utf8_lossy(&std::fs::read(&out_path).unwrap()).into_owned()
}

/// The measuring harness: the report in two iframes, and a script that measures them.
fn harness(report: &str) -> String {
    let srcdoc = report.replace('&', "&amp;").replace('"', "&quot;");
    format!(
        r#"<!DOCTYPE html><html><body style="margin:0">
<iframe id="phone" width="390" height="844" style="border:0;display:block" srcdoc="{srcdoc}"></iframe>
<iframe id="laptop" width="1280" height="800" style="border:0;display:block" srcdoc="{srcdoc}"></iframe>
<script>
addEventListener('load', function () {{
  var out = {{}};
  ['phone', 'laptop'].forEach(function (id) {{
    var f = document.getElementById(id), d = f.contentDocument, w = d.documentElement.clientWidth, h = f.clientHeight;
    var answer = d.querySelector('#answer h2'), first = d.querySelector('#answer .pick .fig');
    var wide = [];
    d.querySelectorAll('body *').forEach(function (e) {{
      var b = e.getBoundingClientRect();
      var box = e.parentElement && e.parentElement.closest('.scroll');
      if (b.right > w + 1 && !(box && getComputedStyle(box).overflowX !== 'visible')) wide.push(e.tagName + '.' + e.className + '#' + (e.id || (e.parentElement && e.parentElement.id) || ''));
    }});
    out[id] = {{
      viewport_width: w,
      viewport_height: h,
      scroll_width: d.documentElement.scrollWidth,
      body_scroll_width: d.body.scrollWidth,
      answer_top: answer ? answer.getBoundingClientRect().top : null,
      first_pick_bottom: first ? first.getBoundingClientRect().bottom : null,
      first_pick_text: first ? d.querySelector('#answer .pick .choice').textContent : null,
      too_wide: wide.slice(0, 10)
    }};
  }});
  var p = document.createElement('pre');
  p.id = 'probe';
  p.textContent = JSON.stringify(out);
  document.body.appendChild(p);
}});
</script></body></html>"#
    )
}

#[test]
fn report_shows_the_answer_first_and_fits_a_phone_and_a_laptop() {
    let Some(chrome) = chromium() else {
        common::missing("chromium is not installed");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    Command::cargo_bin("cipherbench")
        .unwrap()
        .env("XDG_DATA_HOME", &data)
        .env_remove("NO_COLOR")
        .args(["--budget", "6s", "--db"])
        .arg(dir.path().join("h.sqlite"))
        .timeout(Duration::from_secs(120))
        .assert()
        .success();
    let reports: Vec<PathBuf> = std::fs::read_dir(data.join("cipherbench/reports"))
        .expect("the main job writes a report")
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(reports.len(), 1, "{reports:?}");
    let report = std::fs::read_to_string(&reports[0]).unwrap();

    // Self-contained: nothing to run, nothing fetched.
    let lower = report.to_ascii_lowercase();
    for bad in ["<script", "<link", " src=", "url(", "@import", "<iframe"] {
        assert!(!lower.contains(bad), "the report contains {bad}");
    }
    // Answer first; machine and settings last, folded, never raw JSON.
    let at = |needle: &str| report.find(needle).unwrap_or_else(|| panic!("no {needle} in the report"));
    assert!(at("id=\"answer\"") < at("id=\"config\""));
    assert!(at("id=\"config\"") < at("id=\"charts\""));
    assert!(at("id=\"charts\"") < at("id=\"verdicts\""));
    assert!(at("id=\"verdicts\"") < at("id=\"tables\""));
    assert!(at("id=\"tables\"") < at("<details id=\"machine\""));
    let machine = &report[at("<details id=\"machine\"")..];
    assert!(!machine.contains('{') && !machine.contains("\":"), "raw JSON in the settings");
    assert!(report.contains(">TLS 1.3 cipher suites<"), "headings in words");
    assert!(!report.contains(">tls13_suites"), "internal identifiers as headings");

    let screens = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/report-screens");
    std::fs::create_dir_all(&screens).unwrap();
    let harness_path = dir.path().join("harness.html");
    std::fs::write(&harness_path, harness(&report)).unwrap();
    let dom = browse(
        &chrome,
        &dir.path().join("profile-probe"),
        &["--window-size=1400,1800", "--dump-dom"],
        &format!("file://{}", harness_path.display()),
    );
    let probe = dom
        .split("<pre id=\"probe\">")
        .nth(1)
        .and_then(|p| p.split("</pre>").next())
        .unwrap_or_else(|| panic!("the harness did not report: {}", &dom[..dom.len().min(500)]));
    let probe: Value = serde_json::from_str(&probe.replace("&quot;", "\"").replace("&amp;", "&")).unwrap();
    eprintln!("layout: {probe}");
    for (id, width, height) in [("phone", 390, 844), ("laptop", 1280, 800)] {
        let m = &probe[id];
        assert_eq!(m["viewport_width"], width, "{id}: {m}");
        let (w, sw) = (m["viewport_width"].as_f64().unwrap(), m["scroll_width"].as_f64().unwrap());
        assert!(sw <= w, "{id}: the page scrolls sideways ({sw} > {w}): {m}");
        assert!(m["body_scroll_width"].as_f64().unwrap() <= w, "{id}: {m}");
        assert_eq!(m["too_wide"].as_array().map(Vec::len), Some(0), "{id}: {m}");
        let top = m["answer_top"].as_f64().expect("an answer heading");
        let bottom = m["first_pick_bottom"].as_f64().expect("a first pick");
        assert!(
            top >= 0.0 && bottom <= height as f64,
            "{id}: the answer is not in the first screen: {m}"
        );
        assert!(!m["first_pick_text"].as_str().unwrap_or("").trim().is_empty(), "{id}: {m}");

        let png = screens.join(format!("report-{width}.png"));
        let _ = std::fs::remove_file(&png);
        browse(
            &chrome,
            &dir.path().join(format!("profile-{id}")),
            &[
                &format!("--screenshot={}", png.display()),
                &format!("--window-size={width},{height}"),
            ],
            &format!("file://{}", reports[0].display()),
        );
        let head = std::fs::read(&png).unwrap_or_default();
        assert!(head.starts_with(b"\x89PNG"), "no screenshot at {width} px");
        let png_width = u32::from_be_bytes(head[16..20].try_into().unwrap());
        assert_eq!(png_width, width, "screenshot width");
        eprintln!("screenshot: {}", png.display());
    }
}

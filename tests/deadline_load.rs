//! The deadline holds under load: two main jobs at once on the two cores, each
//! with `--budget 15s`, both end within budget + grace (15 s + 1 s + 5%), in
//! every one of [`ROUNDS`] rounds. A run the deadline cuts keeps what it measured: status
//! `partial` (said in a warning) and exit 0, never `failed`.

use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BUDGET: f64 = 15.0;

/// Rounds of two jobs: four deadlines under twice the load (the suite runs this
/// binary alone, after the others: each round is 16 s of CI's wall time).
const ROUNDS: usize = 2;

fn grace() -> f64 {
    1.0 + 0.05 * BUDGET
}

#[test]
fn two_main_jobs_at_once_both_end_within_budget_and_grace() {
    let exe = assert_cmd::cargo::cargo_bin("cipherbench");
    let dir = tempfile::tempdir().unwrap();
    let mut report = Vec::new();
    for round in 0..ROUNDS {
        let t0 = Instant::now();
        let jobs: Vec<_> = (0..2)
            .map(|j| {
                let d = dir.path().join(format!("r{round}-{j}"));
                std::fs::create_dir_all(&d).unwrap();
                let export = d.join("run.json");
                let child = Command::new(&exe)
                    .args(["--budget", "15s", "--quiet", "--no-store", "--export-json"])
                    .arg(&export)
                    .env("XDG_DATA_HOME", &d)
                    .env("NO_COLOR", "1")
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap();
                (child, export)
            })
            .collect();
        for (mut child, export) in jobs {
            // Wait with a bound of our own: a run that never ends fails the test
            // instead of hanging it.
            let status = loop {
                if let Some(st) = child.try_wait().unwrap() {
                    break st;
                }
                if t0.elapsed() > Duration::from_secs(60) {
                    let _ = child.kill();
                    panic!("round {round}: a main job still ran after 60 s");
                }
                std::thread::sleep(Duration::from_millis(20));
            };
            let took = t0.elapsed().as_secs_f64();
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            let doc: Value = serde_json::from_slice(&std::fs::read(&export).unwrap_or_default())
                .unwrap_or_else(|e| panic!("round {round}: no export ({e}): {err}"));
            let run_status = doc["run"]["status"].as_str().unwrap_or("").to_string();
            let results = doc["results"].as_array().map_or(0, Vec::len);
            report.push(format!(
                "round {round}: {took:.2} s, exit {:?}, {run_status}, {results} results",
                status.code()
            ));
            assert!(
                took <= BUDGET + grace(),
                "round {round}: ended after {took:.2} s, past {BUDGET} s + {:.2} s grace: {report:#?}\n{err}",
                grace()
            );
            match (status.code(), run_status.as_str()) {
                (Some(0), "complete") => {}
                (Some(0), "partial") => assert!(err.contains("status partial"), "round {round}: a cut run says so: {err}"),
                other => panic!("round {round}: {other:?}, want exit 0, complete or partial: {err}"),
            }
            assert!(results > 0, "round {round}: nothing kept: {err}");
        }
    }
    eprintln!("{report:#?}");
}

//! `compare` on real runs: two tiny back-to-back `speed` runs of the same subjects
//! are the same (no false alarm), a copy scaled past its intervals (by 0.9, or
//! more on a noisy machine) is a regression, and runs that share nothing fail
//! `--fail-on-regression`.

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

mod common;
use common::false_alarms::FalseAlarms;

/// The tests of this file run one at a time: a second `speed` run at the same
/// moment would share the cores with the first, and that is a change of machine.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn cb() -> Command {
    let mut c = Command::cargo_bin("cipherbench").unwrap();
    c.env("NO_COLOR", "1");
    c
}

fn speed(dir: &Path, name: &str, algs: &[&str]) -> std::path::PathBuf {
    let out = dir.join(name);
    cb().arg("speed")
        .args(algs)
        .args(["--bytes", "1k,16k", "--budget", "5s", "--no-store", "--quiet", "--export-json"])
        .arg(&out)
        .env("XDG_DATA_HOME", dir)
        .assert()
        .success();
    out
}

fn json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn compare_json(a: &Path, b: &Path, extra: &[&str]) -> Value {
    let out = cb()
        .arg("compare")
        .arg(a)
        .arg(b)
        .arg("--json")
        .args(extra)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).unwrap()
}

#[test]
fn back_to_back_runs_are_the_same_and_a_copy_scaled_past_its_intervals_is_a_regression() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let algs = ["aes-128-gcm", "sha256"];
    // Back to back on a shared machine whose speed can double from one second to
    // the next (the runs' own noise says so): a pair the machine moved between is
    // measured again, and such false alarms are counted (at most
    // `MAX_FALSE_ALARMS`): the rate of "not same" on unchanged runs is what this
    // test is about, so retrying until one pair passes would hide it.
    let (a, b) = FalseAlarms::default().retry("two back-to-back speed runs", |attempt| {
        let a = speed(dir.path(), &format!("a{attempt}.json"), &algs);
        let b = speed(dir.path(), &format!("b{attempt}.json"), &algs);
        let c = compare_json(&a, &b, &[]);
        let rows = c["rows"].as_array().map_or(&[][..], Vec::as_slice);
        let moved: Vec<&Value> = rows.iter().filter(|r| r["change"] != "same").collect();
        let alarm = (rows.is_empty() || !moved.is_empty()).then(|| format!("not same: {moved:#?} of {} rows", rows.len()));
        ((a, b), alarm)
    });

    // The run stores its noise, and every interval is at least that wide.
    let doc = json(&a);
    let noise = doc["run"]["settings"]["noise"]["primitive"]
        .as_f64()
        .expect("noise stored with the run");
    assert!(noise > 0.0 && noise < 0.5, "{noise}");
    let results = doc["results"].as_array().unwrap();
    assert!(!results.is_empty(), "nothing measured: {doc:#}");
    for r in results {
        let (m, lo, hi) = (
            r["median"].as_f64().unwrap(),
            r["ci95_low"].as_f64().unwrap(),
            r["ci95_high"].as_f64().unwrap(),
        );
        // At least a factor (1 + noise) either side of the median.
        assert!(lo <= m / (1.0 + noise) + 1e-6 && hi >= m * (1.0 + noise) - 1e-6, "{r}");
        assert!(r["samples"].as_u64().unwrap() >= 3, "independent batches: {r}");
    }

    // Same binary, same machine, back to back: same, and --fail-on-regression passes.
    cb().arg("compare").arg(&a).arg(&b).arg("--fail-on-regression").assert().success();
    let c = compare_json(&a, &b, &[]);
    let rows = c["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 6, "{c:#}");
    assert!(rows.iter().all(|r| r["change"] == "same"), "{c:#}");
    assert!(c["threshold"].as_f64().unwrap() >= 0.05, "the ranking's practical threshold: {c:#}");
    assert!(rows
        .iter()
        .all(|r| r["change_pct"].is_number() && r["clears_threshold"].is_boolean()));
    // What each pair could see, from its two intervals: at least the two runs'
    // noise apart (each interval is at least its run's noise wide), and the
    // comparison's figure is the median over the rows; the terminal says it.
    let seen: Vec<f64> = rows.iter().map(|r| r["detectable_pct"].as_f64().expect("detectable_pct")).collect();
    assert!(seen.iter().all(|x| *x >= noise * 100.0), "{seen:?} against noise {noise}");
    let can_see = c["can_see_pct"].as_f64().expect("can_see_pct");
    let (lo, hi) = seen.iter().fold((f64::MAX, 0.0f64), |(l, h), x| (l.min(*x), h.max(*x)));
    assert!(lo <= can_see && can_see <= hi, "{can_see} outside {seen:?}");
    let out = cb().arg("compare").arg(&a).arg(&b).assert().success().get_output().stdout.clone();
    let text = String::from_utf8_lossy(&out);
    assert!(text.contains(&format!("these runs can see changes above {can_see:.0}%")), "{text}");

    // Every figure scaled by 0.9, or by less where a noisy run's intervals are
    // wider than 10%, so that each scaled interval lies below its original: flagged,
    // and --fail-on-regression fails.
    let tightest = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["ci95_low"].as_f64().unwrap() / r["ci95_high"].as_f64().unwrap())
        .fold(1.0, f64::min);
    let f = (0.97 * tightest).min(0.9);
    let mut slow = json(&a);
    for r in slow["results"].as_array_mut().unwrap() {
        for k in ["median", "mean", "min", "max", "ci95_low", "ci95_high", "cpu_median", "wall_median"] {
            if let Some(v) = r[k].as_f64() {
                r[k] = (v * f).into();
            }
        }
    }
    let slow_path = dir.path().join("slow.json");
    std::fs::write(&slow_path, serde_json::to_vec(&slow).unwrap()).unwrap();
    let c = compare_json(&a, &slow_path, &[]);
    assert_eq!(c["regressions"].as_u64().unwrap(), 6, "every row, scaled by {f}: {c:#}");
    assert!(c["rows"].as_array().unwrap().iter().all(|r| r["change"] == "slower"));
    let failed = cb()
        .arg("compare")
        .arg(&a)
        .arg(&slow_path)
        .arg("--fail-on-regression")
        .assert()
        .failure()
        .get_output()
        .clone();
    assert_eq!(failed.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&failed.stderr).contains("regression(s)"));
    // With a threshold above the change it is not called one.
    let above = format!("{:.0}%", (1.0 - f) * 100.0 + 5.0);
    let c = compare_json(&a, &slow_path, &["--threshold", &above]);
    assert_eq!(c["regressions"], 0, "{c:#}");
    cb().args(["compare", "--threshold", "150%"]).arg(&a).arg(&b).assert().code(2);
}

#[test]
fn runs_that_share_no_result_fail_on_regression() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let a = speed(dir.path(), "a.json", &["sha256"]);
    let mut other = json(&a);
    for r in other["results"].as_array_mut().unwrap() {
        r["subject"]["algorithm"] = "sha512".into();
    }
    let b = dir.path().join("other.json");
    std::fs::write(&b, serde_json::to_vec(&other).unwrap()).unwrap();
    // Without the flag it reports; with it, nothing compared is a failure.
    let out = cb().arg("compare").arg(&a).arg(&b).assert().success().get_output().stdout.clone();
    assert!(String::from_utf8_lossy(&out).contains("share no result"));
    let failed = cb()
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .arg("--fail-on-regression")
        .assert()
        .failure()
        .get_output()
        .clone();
    assert!(
        String::from_utf8_lossy(&failed.stderr).contains("nothing to compare"),
        "{}",
        String::from_utf8_lossy(&failed.stderr)
    );
}

//! The one check on figures that come back from outside: an export `fleet` merges,
//! a JSON document `compare` reads, a run read back from the history. Each reader
//! calls [`check_records`] and refuses what fails, by name; nothing here is called
//! on figures this process measured itself.
//!
//! A figure is physically possible when it is finite and within the bounds of its
//! metric (docs/json-schema.md, "Figures read back"):
//!
//! | metric                | lowest   | highest  |                                  |
//! |-----------------------|----------|----------|----------------------------------|
//! | `bytes_per_sec`       | 1e-6     | 1e15     | 1 PB/s: beyond any memory bus    |
//! | `ops_per_sec`         | 1e-6     | 1e12     |                                  |
//! | `handshakes_per_sec`  | 1e-6     | 1e9      | a handshake takes microseconds   |
//! | `seconds`             | 1e-9     | 1e6      | 1 ns to 11.6 days                |
//! | `accepted`            | 0        | 1        | 0 refused, 1 accepted            |
//!
//! That bound holds for every figure of a record in its metric: `median`, `mean`,
//! `min`, `max`, `ci95_low`, `ci95_high`, `cpu_median`, `wall_median`, `p95` and
//! each round's value. Zero and negative figures are refused (a rate or a time of
//! zero was not measured), except CPU seconds (a record whose mode names `cpu`,
//! e.g. `server-cpu-per-gb`), which may be 0: the kernel counts them in 10 ms
//! ticks. Besides: `cv` is in [0, 1e3]; `samples` at most 1e12;
//! `client_hello_bytes` at most 16 MiB; a CPU time per login (`handshake_cpu`) is
//! in [0, 1e6] s (0 is possible: the server's clock ticks are 10 ms), and the
//! high end of a one-login interval is `f64::MAX`, as the measurement writes it.
//!
//! The upper bounds are far below what an `f32` holds (3.4e38) and what sums of
//! squares of many figures hold in an `f64`, so no pooled statistic downstream
//! overflows; the lower ones keep `1/x` finite.

use crate::model::{CpuFigure, Metric, ResultRecord};

/// The bounds of one metric: `(lowest, highest)`, both inclusive.
pub fn bounds(metric: Metric) -> (f64, f64) {
    match metric {
        Metric::BytesPerSec => (1e-6, 1e15),
        Metric::OpsPerSec => (1e-6, 1e12),
        Metric::HandshakesPerSec => (1e-6, 1e9),
        Metric::Seconds => (1e-9, 1e6),
        Metric::Accepted => (0.0, 1.0),
    }
}

/// The highest `samples` a record may claim.
pub const MAX_SAMPLES: usize = 1_000_000_000_000;
/// The highest coefficient of variation (positive samples give at most √n).
pub const MAX_CV: f64 = 1e3;
/// The longest first flight of a TLS client, in bytes.
pub const MAX_CLIENT_HELLO: u64 = 16 << 20;
/// The longest CPU time per login, in seconds.
pub const MAX_CPU_SECONDS: f64 = 1e6;

fn within(name: &str, v: f64, (lo, hi): (f64, f64), unit: &str) -> Result<(), String> {
    if !v.is_finite() {
        return Err(format!("{name} is {v}, not a finite number"));
    }
    if v < lo || v > hi {
        let unit = if unit.is_empty() { String::new() } else { format!(" {unit}") };
        return Err(format!(
            "{name} is {v:e}{unit}, outside what is physically possible ({lo:e} to {hi:e})"
        ));
    }
    Ok(())
}

fn metric_name(m: Metric) -> String {
    serde_json::to_value(m)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

fn cpu(name: &str, f: &CpuFigure) -> Result<(), String> {
    let b = (0.0, MAX_CPU_SECONDS);
    within(&format!("{name}.mean"), f.mean, b, "s")?;
    within(&format!("{name}.ci95_low"), f.ci95_low, b, "s")?;
    // One login has no interval: the measurement writes f64::MAX as its high end.
    if !(f.samples < 2 && f.ci95_high == f64::MAX) {
        within(&format!("{name}.ci95_high"), f.ci95_high, b, "s")?;
    }
    if f.samples > MAX_SAMPLES {
        return Err(format!("{name}.samples is {}, over {MAX_SAMPLES}", f.samples));
    }
    Ok(())
}

/// Whether every figure of `r` is physically possible; else which one is not.
pub fn check_record(r: &ResultRecord) -> Result<(), String> {
    let b = bounds(r.metric);
    // CPU seconds (a `…-cpu-per-gb` record's mode) are counted in the kernel's
    // clock ticks (10 ms): a short transfer that used less than a tick reads 0,
    // and a run's own records must read back.
    let b = if r.metric == Metric::Seconds && r.subject.mode.as_deref().is_some_and(|m| m.contains("cpu")) {
        (0.0, b.1)
    } else {
        b
    };
    let unit = metric_name(r.metric);
    let figures = [
        ("median", r.median),
        ("mean", r.mean),
        ("min", r.min),
        ("max", r.max),
        ("ci95_low", r.ci95_low),
        ("ci95_high", r.ci95_high),
        ("cpu_median", r.cpu_median),
        ("wall_median", r.wall_median),
        ("p95", r.p95),
    ];
    for (name, v) in figures {
        if let Some(v) = v {
            within(name, v, b, &unit)?;
        }
    }
    for (i, x) in r.rounds.iter().enumerate() {
        within(&format!("rounds[{i}].value"), x.value, b, &unit)?;
    }
    if let Some(cv) = r.cv {
        within("cv", cv, (0.0, MAX_CV), "")?;
    }
    if let Some(n) = r.samples {
        if n > MAX_SAMPLES {
            return Err(format!("samples is {n}, over {MAX_SAMPLES}"));
        }
    }
    if let Some(n) = r.client_hello_bytes {
        if n > MAX_CLIENT_HELLO {
            return Err(format!("client_hello_bytes is {n}, over {MAX_CLIENT_HELLO}"));
        }
    }
    if let Some(h) = &r.handshake_cpu {
        for (name, f) in [("client", &h.client), ("server", &h.server), ("total", &h.total)] {
            if let Some(f) = f {
                cpu(&format!("handshake_cpu.{name}"), f)?;
            }
        }
    }
    Ok(())
}

/// Whether every figure of every record is physically possible; else the first
/// that is not, with the record's position and subject (outside text, escaped).
pub fn check_records(records: &[ResultRecord]) -> Result<(), String> {
    for (i, r) in records.iter().enumerate() {
        check_record(r).map_err(|e| {
            let label = crate::untrusted::shown(&crate::untrusted::bounded(&crate::model::subject_label(r), 120)).into_owned();
            format!("result {} ({label}, {}): {e}", i + 1, metric_name(r.metric))
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Kind, Status, Summary};

    /// A CPU-seconds record may read 0 (less than a clock tick), and only it.
    #[test]
    fn cpu_seconds_may_be_zero_and_nothing_else_may() {
        let mut r = rec(Metric::Seconds, 0.0);
        assert!(check_record(&r).is_err());
        r.subject.mode = Some("server-cpu-per-gb".into());
        assert_eq!(check_record(&r), Ok(()));
        r.min = Some(-1e-3);
        assert!(check_record(&r).is_err());
        let mut t = rec(Metric::BytesPerSec, 0.0);
        t.subject.mode = Some("server-cpu-per-gb".into());
        assert!(check_record(&t).is_err(), "a rate of 0 was not measured");
    }

    fn rec(metric: Metric, v: f64) -> ResultRecord {
        let s = Summary {
            median: v,
            mean: v,
            min: v,
            max: v,
            ci95_low: v,
            ci95_high: v,
            samples: 10,
            cv: 0.01,
        };
        ResultRecord::ok(Kind::Primitive, Default::default(), metric, &s, None)
    }

    #[test]
    fn real_figures_pass_and_impossible_ones_are_named() {
        for (m, v) in [
            (Metric::BytesPerSec, 4.2e9),
            (Metric::HandshakesPerSec, 1800.0),
            (Metric::OpsPerSec, 5.0e4),
            (Metric::Seconds, 0.0012),
            (Metric::Accepted, 0.0),
            (Metric::Accepted, 1.0),
        ] {
            assert_eq!(check_record(&rec(m, v)), Ok(()), "{m:?} {v}");
        }
        for (m, v) in [
            (Metric::BytesPerSec, 1e308),
            (Metric::BytesPerSec, 4e38),
            (Metric::BytesPerSec, 2e15),
            (Metric::BytesPerSec, 0.0),
            (Metric::BytesPerSec, -1.0),
            (Metric::BytesPerSec, f64::NAN),
            (Metric::BytesPerSec, f64::INFINITY),
            (Metric::Seconds, 1e-12),
            (Metric::Seconds, f64::NEG_INFINITY),
            (Metric::HandshakesPerSec, 1e10),
            (Metric::Accepted, 2.0),
        ] {
            let e = check_record(&rec(m, v)).expect_err(&format!("{m:?} {v}"));
            assert!(e.starts_with("median is "), "{e}");
        }
        // One figure is enough, wherever it is.
        let mut r = rec(Metric::BytesPerSec, 1e9);
        r.p95 = Some(-3.0);
        assert!(check_record(&r).unwrap_err().starts_with("p95 "));
        let mut r = rec(Metric::BytesPerSec, 1e9);
        r.cv = Some(f64::NAN);
        assert!(check_record(&r).is_err());
        let mut r = rec(Metric::BytesPerSec, 1e9);
        r.status = Status::Failed;
        r.ci95_high = Some(1e300);
        let e = check_records(&[rec(Metric::BytesPerSec, 1e9), r]).unwrap_err();
        assert!(e.starts_with("result 2 (") && e.contains("ci95_high"), "{e}");
    }

    #[test]
    fn a_one_login_cpu_interval_keeps_its_open_end() {
        let mut r = rec(Metric::Seconds, 0.01);
        let one = CpuFigure {
            mean: 0.0,
            ci95_low: 0.0,
            ci95_high: f64::MAX,
            samples: 1,
        };
        r.handshake_cpu = Some(crate::model::HandshakeCpu {
            client: Some(one),
            server: None,
            total: None,
            method: "t".into(),
        });
        assert_eq!(check_record(&r), Ok(()));
        r.handshake_cpu.as_mut().unwrap().client = Some(CpuFigure { samples: 5, ..one });
        assert!(check_record(&r).is_err());
        r.handshake_cpu.as_mut().unwrap().client = Some(CpuFigure {
            mean: -0.5,
            ci95_high: 0.1,
            ..one
        });
        assert!(check_record(&r).is_err());
    }
}

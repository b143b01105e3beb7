//! `speed`: OpenSSL (and GnuTLS) primitives by block size.

use super::{finish, open_store, outputs, progress, reexec_masked};
use crate::discover::{self, cpucaps};
use crate::error::UsageError;
use crate::measure::plans::{self as plan, DEFAULT_SIZES};
use crate::measure::{self, primitive};
use crate::options::{CommonOptions, SpeedOptions};
use crate::session::{Judged, Session};
use crate::units::{Bytes, Seconds};
use anyhow::Result;
use serde_json::json;

pub(super) fn speed(c: &CommonOptions, a: &SpeedOptions, command: &str, default_budget: Seconds) -> Result<()> {
    // Validate everything typed before touching libraries or files.
    let prims = resolve(&a.algorithms, a.all)?;
    let sizes: Vec<Bytes> = if a.bytes.is_empty() {
        DEFAULT_SIZES.iter().map(|&b| Bytes(b)).collect()
    } else {
        a.bytes.clone()
    };
    let caps = a.cpu_caps.as_deref().map(cpucaps::parse).transpose()?;
    let budget = c.budget.unwrap_or(default_budget);
    let threads = a.threads as usize;
    check_memory(threads, sizes.iter().map(|b| b.0).max().unwrap_or(0))?;
    crate::deadline::set_run(std::time::Instant::now(), budget);
    let mut settings = json!({
        "algorithms": prims.iter().map(|p| p.name).collect::<Vec<_>>(),
        "bytes": sizes.iter().map(|b| b.0).collect::<Vec<_>>(),
        "threads": threads,
        "budget_seconds": budget.0,
        "libraries": a.libraries.iter().map(|l| l.as_str()).collect::<Vec<_>>(),
    });
    if let (Some(caps), Some(spec)) = (&caps, &a.cpu_caps) {
        let host = discover::host::fingerprint();
        let (var, value) = cpucaps::environment(caps, &host.arch, &host.cpu_flags);
        if std::env::var(cpucaps::MARKER).ok().as_deref() != Some(spec.as_str()) {
            return reexec_masked(spec, &var, &value);
        }
        settings["cpu_caps"] = json!(spec);
        settings[var] = json!(value);
    }
    let store = open_store(c)?;

    let (session, mut measurements) = Session::start(command, settings, store, progress(c))?;
    let plan = plan::primitives(&prims, &a.libraries, &sizes, threads, crate::deadline::plan_budget(budget));
    let measured = measure::primitives(&plan, &mut measurements);
    let verdicts = crate::judge::primitive_verdicts(&measurements.results);
    finish(session, measurements, Judged::from_verdicts(verdicts), measured, &outputs(c))
}

/// Resolves typed names to catalogue entries, with suggestions for typos.
pub(super) fn resolve(names: &[String], all: bool) -> Result<Vec<&'static primitive::Primitive>, UsageError> {
    if all {
        return Ok(primitive::CATALOG.iter().collect());
    }
    if names.is_empty() {
        return Ok(primitive::CATALOG.iter().filter(|p| p.default).collect());
    }
    let mut out: Vec<&'static primitive::Primitive> = Vec::new();
    for n in names {
        let p = primitive::lookup(n).ok_or_else(|| UsageError::unknown("algorithm", n, primitive::known_names()))?;
        if !out.contains(&p) {
            out.push(p);
        }
    }
    Ok(out)
}

/// `speed --threads N --bytes B`: every thread holds an input and an output
/// buffer of the largest size (and a little more). Refused before measuring
/// when that would not fit in memory, instead of an allocation abort later.
fn check_memory(threads: usize, largest: u64) -> Result<(), UsageError> {
    let need = threads as u64 * (2 * largest + (64 << 10));
    let Some(avail) = available_memory() else { return Ok(()) };
    if need as f64 > avail as f64 * 0.8 {
        return Err(UsageError::Invalid(format!(
            "--threads {threads} with --bytes up to {} needs about {:.1} GiB of buffers, and {:.1} GiB is available: use fewer threads or smaller sizes",
            Bytes(largest),
            need as f64 / (1u64 << 30) as f64,
            avail as f64 / (1u64 << 30) as f64
        )));
    }
    Ok(())
}

/// Memory this process may still use: the kernel's MemAvailable, and less when a
/// cgroup (v2) limit leaves less.
fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let avail = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())?
        * 1024;
    let read = |f: &str| {
        std::fs::read_to_string(format!("/sys/fs/cgroup/{f}"))
            .ok()?
            .trim()
            .parse::<u64>()
            .ok()
    };
    let cgroup = match (read("memory.max"), read("memory.current")) {
        (Some(max), Some(cur)) => Some(max.saturating_sub(cur)),
        _ => None,
    };
    Some(cgroup.map_or(avail, |c| c.min(avail)))
}

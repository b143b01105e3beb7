//! `file`: whole files encrypted and decrypted (the symmetric-cipher study).

use super::{finish, open_store, outputs, progress};
use crate::error::UsageError;
use crate::measure::plans;
use crate::measure::{self, primitive};
use crate::options::{CommonOptions, FileOptions};
use crate::session::{Judged, Session};
use crate::units::Bytes;
use anyhow::Result;
use serde_json::json;

pub(super) fn file(c: &CommonOptions, a: &FileOptions) -> Result<()> {
    // Validate everything typed before touching files or libraries.
    if a.paths.is_empty() && a.size.is_empty() {
        return Err(UsageError::Invalid("give files to encrypt, or --size 100M for generated data".into()).into());
    }
    let prims = resolve_file_ciphers(&a.ciphers, a.all)?;
    let chunk = (a.chunk.0 as usize).clamp(4096, 64 << 20);
    let parent = a.output_dir.clone().unwrap_or_else(std::env::temp_dir);
    // Inputs are checked (kind, readable) before anything is written or hashed.
    for p in &a.paths {
        file_input_kind(p)?;
    }
    if let Some(b) = c.budget {
        crate::deadline::set_run(std::time::Instant::now(), b);
    }
    let workdir = crate::measure::file::private_dir(&parent)
        .map_err(|e| UsageError::Invalid(format!("cannot write in the output directory {}: {e}", parent.display())))?;
    let mut inputs = Vec::new();
    for p in &a.paths {
        inputs.push(file_input(p, chunk)?);
    }
    for &size in &a.size {
        inputs.push(generate_input(workdir.path(), size, chunk)?);
    }
    let store = open_store(c)?;
    let settings = json!({
        "ciphers": prims.iter().map(|p| p.name).collect::<Vec<_>>(),
        "mode": a.mode,
        "reps": a.reps,
        "chunk_bytes": chunk,
        "keys": if a.password.is_some() { format!("pbkdf2-hmac-sha256, {} iterations", a.pbkdf2_iter) } else { "random".into() },
        "via_openssl_cli": a.via_openssl_cli,
        "inputs": inputs.iter().map(|i| json!({"path": i.label, "bytes": i.size, "sha256": hex::encode(i.sha256)})).collect::<Vec<_>>(),
    });
    let empties: Vec<&str> = inputs.iter().filter(|i| i.size == 0).map(|i| i.label.as_str()).collect();
    if !empties.is_empty() && !c.quiet && !c.json {
        eprintln!("note: {} empty: nothing to time there", empties.join(", "));
    }

    let (session, mut measurements) = Session::start("file", settings, store, progress(c))?;
    let plan = plans::FilePlan {
        inputs,
        primitives: prims,
        mode: a.mode,
        reps: a.reps as usize,
        via_openssl_cli: a.via_openssl_cli,
        chunk,
        password: a.password.clone(),
        pbkdf2_iterations: a.pbkdf2_iter,
        workdir: workdir.path().to_path_buf(),
        budget: c.budget,
    };
    let measured = measure::files(&plan, &mut measurements);
    let verdicts = crate::judge::primitive_verdicts(&measurements.results);
    let outcome = finish(session, measurements, Judged::from_verdicts(verdicts), measured, &outputs(c));
    // Outputs and generated inputs go now, whatever happened.
    crate::interrupt::forget_dir(workdir.path());
    drop(workdir);
    outcome
}

/// Resolves the `file` cipher list: known names that can stream a file.
fn resolve_file_ciphers(names: &[String], all: bool) -> Result<Vec<&'static primitive::Primitive>, UsageError> {
    use crate::measure::file::supports;
    if all {
        return Ok(primitive::CATALOG.iter().filter(|p| supports(p)).collect());
    }
    let names: Vec<String> = if names.is_empty() {
        plans::DEFAULT_FILE_CIPHERS.iter().map(|s| s.to_string()).collect()
    } else {
        names.to_vec()
    };
    let prims = super::speed::resolve(&names, false)?;
    if let Some(p) = prims.iter().find(|p| !supports(p)) {
        return Err(UsageError::Invalid(format!(
            "{} cannot encrypt a file as a stream ({}); use a cipher, GCM, OCB or chacha20-poly1305",
            p.name,
            if p.class.label() == "aead" {
                "CCM needs the whole length first"
            } else {
                "it is not a cipher"
            }
        )));
    }
    Ok(prims)
}

/// Checks that each path is a readable regular file, before anything is measured.
fn file_input(path: &std::path::Path, chunk: usize) -> Result<plans::FileInput> {
    let shown = path.display();
    // stat, never open, first: opening a FIFO blocks until a writer comes.
    let meta = std::fs::metadata(path).map_err(|e| UsageError::Invalid(format!("cannot read {shown}: {e}")))?;
    if meta.is_dir() {
        return Err(UsageError::Invalid(format!("{shown} is a directory; give the files in it")).into());
    }
    if let Some(kind) = crate::measure::file::special_kind(&meta.file_type()) {
        return Err(UsageError::Invalid(format!("{shown} is {kind}: give a regular file, or --size")).into());
    }
    crate::measure::file::open_input(path).map_err(|e| UsageError::Invalid(format!("{e:#}")))?;
    let sha256 = crate::measure::file::hash_file(path, chunk)?;
    Ok(plans::FileInput {
        path: path.to_path_buf(),
        label: path.display().to_string(),
        size: meta.len(),
        sha256,
    })
}

/// Refuses directories, devices, FIFOs and sockets at once (stat only).
fn file_input_kind(path: &std::path::Path) -> Result<(), UsageError> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| UsageError::Invalid(format!("cannot read {shown}: {e}")))?;
    if meta.is_dir() {
        return Err(UsageError::Invalid(format!("{shown} is a directory; give the files in it")));
    }
    if let Some(kind) = crate::measure::file::special_kind(&meta.file_type()) {
        return Err(UsageError::Invalid(format!("{shown} is {kind}: give a regular file, or --size")));
    }
    Ok(())
}

/// Writes `size` bytes of random data in `dir`, chunk by chunk.
fn generate_input(dir: &std::path::Path, size: Bytes, chunk: usize) -> Result<plans::FileInput> {
    use std::io::Write;
    let label = format!("generated-{size}").replace(' ', "");
    let path = dir.join(&label);
    let mut f = std::fs::File::create(&path).map_err(|e| UsageError::Invalid(format!("cannot write {}: {e}", path.display())))?;
    let mut buf = vec![0u8; chunk.min(size.0 as usize).max(1)];
    let mut left = size.0;
    while left > 0 {
        let n = (buf.len() as u64).min(left) as usize;
        openssl::rand::rand_bytes(&mut buf[..n])?;
        f.write_all(&buf[..n])
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
        left -= n as u64;
    }
    f.sync_all()?;
    let mut input = file_input(&path, chunk)?;
    input.label = label;
    Ok(input)
}

//! Output: the terminal, JSON, CSV and Markdown, all from the one document model.
//! `--json` prints only the document on stdout; exports go to files (`-` is
//! stdout) and are written whole or not at all.

pub mod answer;
pub mod cells;
pub mod compare;
pub mod csv;
pub mod html;
pub mod interop;
pub mod json;
pub mod markdown;
pub mod rankings;
pub mod table;
pub mod terminal;

use crate::model::Document;
use anyhow::{Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where the document goes.
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    /// Print the JSON document on stdout and nothing else.
    pub json: bool,
    pub export_json: Option<PathBuf>,
    pub export_csv: Option<PathBuf>,
    pub export_markdown: Option<PathBuf>,
    /// No terminal summary and no progress bar.
    pub quiet: bool,
}

/// A whole-document format for `report --format` (and `-o FILE`).
pub use crate::options::Format;

impl Format {
    /// The format a file name implies (`report.html`, `runs.csv` ...).
    pub fn from_path(path: &Path) -> Option<Format> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "html" | "htm" => Some(Format::Html),
            "md" | "markdown" => Some(Format::Md),
            "json" => Some(Format::Json),
            "csv" => Some(Format::Csv),
            "txt" | "text" => Some(Format::Text),
            _ => None,
        }
    }
}

/// The libraries a report names beside the machine, each as it reports itself
/// (`backend::libraries`): every registered library the run recorded as
/// available, in the registry's order (the system OpenSSL first), where it is
/// the machine's own (its defaults matter to the answer) or the run measured it
/// (one built into cipherbench says nothing about the machine otherwise); then
/// OpenSSH.
pub fn library_versions(doc: &Document) -> Vec<String> {
    let measured = |name: &str| {
        doc.results.iter().any(|r| {
            [&r.subject.library, &r.subject.server_library]
                .iter()
                .any(|l| l.as_deref() == Some(name))
        })
    };
    let mut libs: Vec<String> = crate::backend::libraries::ALL
        .iter()
        .filter_map(|e| {
            let v = doc.run.libraries.get(e.name)?;
            let shown = !v.starts_with("unavailable") && (!e.built_in || measured(e.name));
            shown.then(|| crate::backend::libraries::shown_version(e, v))
        })
        .collect();
    if let Some(v) = doc.run.settings.get("openssh_version").and_then(|v| v.as_str()) {
        libs.push(v.to_string());
    }
    libs
}

/// `doc` rendered in `format`.
pub fn render(doc: &Document, format: Format) -> Result<Vec<u8>> {
    Ok(match format {
        Format::Html => html::render(doc).into_bytes(),
        Format::Md => markdown::render(doc).into_bytes(),
        Format::Json => json::render(doc)?,
        Format::Csv => csv::render(doc)?,
        Format::Text => {
            let colors = console::colors_enabled();
            console::set_colors_enabled(false);
            let text = terminal::render(doc);
            console::set_colors_enabled(colors);
            text.into_bytes()
        }
    })
}

pub use crate::progress::colors_enabled;

/// The mode a new file gets from the process's umask (`0666 & !umask`), as a
/// file made by `open(2)` would. Read once: `umask(2)` can only be read by
/// setting it.
pub fn umask_mode() -> u32 {
    static MODE: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *MODE.get_or_init(|| {
        // SAFETY: umask has no preconditions; the old value is put back at once.
        let old = unsafe { libc::umask(0o077) };
        // SAFETY: as above.
        unsafe { libc::umask(old) };
        0o666 & !(old as u32)
    })
}

/// Writes `bytes` to `path` atomically (a temporary file beside it, renamed into
/// place), or to stdout for `-`. The file gets the umask's mode (not the
/// temporary file's 0600): reports and exports are not secrets. On any failure
/// the temporary file is removed before the error is returned, so nothing is
/// left behind even when the process exits right after.
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<()> {
    write_file(path, bytes, umask_mode())
}

/// [`write_output`] with an explicit mode (0600 for secrets).
pub fn write_file(path: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    if path == Path::new("-") {
        let mut out = std::io::stdout().lock();
        out.write_all(bytes)?;
        out.flush()?;
        return Ok(());
    }
    if path.is_dir() {
        anyhow::bail!("cannot write {}: it is a directory", path.display());
    }
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let tmp = tempfile::Builder::new()
        .prefix(".cipherbench-")
        .tempfile_in(dir)
        .with_context(|| format!("cannot write {}", path.display()))?;
    let written = (|| -> std::io::Result<()> {
        let mut f = tmp.as_file();
        f.write_all(bytes)?;
        f.set_permissions(std::fs::Permissions::from_mode(mode))?;
        f.sync_all()
    })();
    if let Err(e) = written {
        let shown = tmp.path().to_path_buf();
        drop(tmp);
        let _ = std::fs::remove_file(&shown);
        return Err(anyhow::Error::new(e).context(format!("writing {}", path.display())));
    }
    tmp.persist(path).map_err(|e| {
        let (err, file) = (e.error, e.file);
        let _ = file.close();
        anyhow::Error::new(err).context(format!("cannot write {}", path.display()))
    })?;
    Ok(())
}

/// Checks, before anything is measured, that `path` can be written: its folder
/// exists and takes a new file, and the path itself is not a directory. Bad
/// paths are bad input (exit 2).
pub fn check_writable(path: &Path, what: &str) -> Result<(), crate::error::UsageError> {
    let bad = |why: String| crate::error::UsageError::Invalid(format!("{what} {}: {why}", path.display()));
    if path == Path::new("-") {
        return Ok(());
    }
    if path.is_dir() {
        return Err(bad("is a directory; give a file name".into()));
    }
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(bad(format!("the folder {} does not exist", dir.display())));
    }
    tempfile::Builder::new()
        .prefix(".cipherbench-check-")
        .tempfile_in(dir)
        .map(drop)
        .map_err(|e| bad(format!("cannot create a file in {}: {e}", dir.display())))
}

/// Writes `bytes` to stdout (a closed pipe surfaces as an error `main` treats as normal).
pub fn print(bytes: &[u8]) -> Result<()> {
    write_output(Path::new("-"), bytes)
}

/// Prints a page of human-readable text (tables, answers, diffs) to stdout through
/// the terminal's last guard ([`crate::untrusted::for_terminal`]): outside values
/// that reached it unescaped come out escaped.
pub fn print_text(text: &str) -> Result<()> {
    print(crate::untrusted::for_terminal(text).as_bytes())
}

/// Emits `doc` to every requested output. Every export is attempted even when
/// an earlier one fails; the failures are returned together.
pub fn emit(doc: &Document, out: &Outputs) -> Result<()> {
    if out.json {
        write_output(Path::new("-"), &json::render(doc)?)?;
    } else if !out.quiet {
        print_text(&terminal::render(doc))?;
    }
    let mut failed: Vec<String> = Vec::new();
    let mut attempt = |p: &Option<PathBuf>, render: &dyn Fn() -> Result<Vec<u8>>| {
        if let Some(p) = p {
            if let Err(e) = render().and_then(|b| write_output(p, &b)) {
                failed.push(format!("{e:#}"));
            }
        }
    };
    attempt(&out.export_json, &|| json::render(doc));
    attempt(&out.export_csv, &|| csv::render(doc));
    attempt(&out.export_markdown, &|| Ok(markdown::render(doc).into_bytes()));
    if !failed.is_empty() {
        return Err(crate::error::NotSaved(failed.join("; ")).into());
    }
    Ok(())
}

impl Outputs {
    /// Checks every export path before anything is measured.
    pub fn check(&self) -> Result<(), crate::error::UsageError> {
        for (p, what) in [
            (&self.export_json, "--export-json"),
            (&self.export_csv, "--export-csv"),
            (&self.export_markdown, "--export-markdown"),
        ] {
            if let Some(p) = p {
                check_writable(p, what)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn entries(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// The machine line names OpenSSL, an installed GnuTLS, and another library
    /// (rustls) only in a run that measured it; never cipherbench itself or the
    /// legacy provider's state.
    #[test]
    fn library_versions_name_what_the_run_used() {
        let mut doc: Document = serde_json::from_value(serde_json::json!({
            "schema": "cipherbench/1",
            "run": {"id": "r", "started_at": "t", "status": "complete", "command": "tls",
                    "host": {"cpu_model": "c", "cores": 2, "cpu_flags": [], "kernel": "k", "arch": "x86_64", "hostname": "h"},
                    "libraries": {"openssl": "OpenSSL 3.0.19 27 Jan 2026", "gnutls": "3.7.9", "rustls": "0.23.46 (aws-lc-rs 1.19.0)",
                                  "cipherbench": "0.1.0", "openssl-legacy-provider": "loaded"},
                    "settings": {"openssh_version": "OpenSSH_9.2p1"}},
            "results": []
        }))
        .unwrap();
        assert_eq!(
            library_versions(&doc),
            ["OpenSSL 3.0.19 27 Jan 2026", "GnuTLS 3.7.9", "OpenSSH_9.2p1"]
        );
        doc.results.push(crate::model::ResultRecord::not_ok(
            crate::model::Kind::TlsHandshake,
            crate::model::Subject {
                library: Some("rustls".into()),
                ..Default::default()
            },
            crate::model::Metric::HandshakesPerSec,
            crate::model::Status::Unsupported,
            "x".to_string(),
        ));
        assert_eq!(
            library_versions(&doc),
            [
                "OpenSSL 3.0.19 27 Jan 2026",
                "GnuTLS 3.7.9",
                "rustls 0.23.46 (aws-lc-rs 1.19.0)",
                "OpenSSH_9.2p1"
            ]
        );
    }

    #[test]
    fn atomic_writes_leave_nothing_behind_and_take_the_umask() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("sub");
        std::fs::create_dir(&target).unwrap();
        // The target is a directory: refused, and no temporary file beside it.
        assert!(write_output(&target, b"x").is_err());
        assert_eq!(entries(d.path()), vec!["sub".to_string()]);
        // A missing folder: refused by the check before measuring.
        let e = check_writable(&d.path().join("nope/out.json"), "--export-json").unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
        assert!(check_writable(&target, "--export-json").is_err());
        // A good write gets 0666 & !umask, not 0600.
        let f = d.path().join("out.json");
        write_output(&f, b"{}").unwrap();
        let mode = std::fs::metadata(&f).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, umask_mode(), "{mode:o}");
        assert_eq!(entries(d.path()), vec!["out.json".to_string(), "sub".to_string()]);
        write_file(&d.path().join("secret"), b"k", 0o600).unwrap();
        assert_eq!(
            std::fs::metadata(d.path().join("secret")).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
}

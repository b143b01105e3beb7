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
pub mod progress;
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One self-contained HTML file with charts.
    Html,
    /// Markdown tables.
    #[value(alias = "markdown")]
    Md,
    /// The cipherbench/1 JSON document.
    Json,
    /// One row per result.
    Csv,
    /// The terminal summary, without colours.
    #[value(alias = "txt")]
    Text,
}

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

/// True unless `NO_COLOR` is set (to anything) or stdout is not a terminal.
pub fn colors_enabled() -> bool {
    std::env::var_os("NO_COLOR").is_none() && console::colors_enabled()
}

/// Writes `bytes` to `path` atomically (a temporary file renamed into place), or to
/// stdout for `-`.
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<()> {
    if path == Path::new("-") {
        let mut out = std::io::stdout().lock();
        out.write_all(bytes)?;
        out.flush()?;
        return Ok(());
    }
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir).with_context(|| format!("cannot write {}", path.display()))?;
    tmp.write_all(bytes).with_context(|| format!("writing {}", path.display()))?;
    tmp.as_file().sync_all().with_context(|| format!("writing {}", path.display()))?;
    tmp.persist(path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Writes `bytes` to stdout (a closed pipe surfaces as an error `main` treats as normal).
pub fn print(bytes: &[u8]) -> Result<()> {
    write_output(Path::new("-"), bytes)
}

/// Emits `doc` to every requested output.
pub fn emit(doc: &Document, out: &Outputs) -> Result<()> {
    if out.json {
        write_output(Path::new("-"), &json::render(doc)?)?;
    } else if !out.quiet {
        write_output(Path::new("-"), terminal::render(doc).as_bytes())?;
    }
    if let Some(p) = &out.export_json {
        write_output(p, &json::render(doc)?)?;
    }
    if let Some(p) = &out.export_csv {
        write_output(p, &csv::render(doc)?)?;
    }
    if let Some(p) = &out.export_markdown {
        write_output(p, markdown::render(doc).as_bytes())?;
    }
    Ok(())
}

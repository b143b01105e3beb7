//! A progress bar on a terminal, nothing at all in a pipe; and warnings, which
//! must never land on the bar's line: `warn` prints whole lines above the bar.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;

/// The bar on screen now, if any, so that a warning from anywhere can step around it.
static ACTIVE: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// `text` as `warning: ...` lines on stderr, each ending in a newline, wrapped at
/// word boundaries to the terminal's width (continuations indented), printed above
/// the progress bar instead of on its line.
pub fn warn(text: &str) {
    let width = console::Term::stderr()
        .size_checked()
        .map(|(_, cols)| cols as usize)
        .filter(|c| *c >= 40);
    let full = format!("warning: {}", text.trim_end());
    let lines = match width {
        Some(w) => wrap_words(&full, w, 2),
        None => full.lines().map(String::from).collect(),
    };
    let mut out = String::new();
    for l in lines {
        out.push_str(&l);
        out.push('\n');
    }
    let out = crate::untrusted::for_terminal(&out);
    let bar = ACTIVE.lock().ok().and_then(|g| g.clone());
    match bar {
        Some(b) => b.suspend(|| eprint!("{out}")),
        None => eprint!("{out}"),
    }
}

/// `text` in lines of at most `width` columns, broken at spaces (a longer word keeps
/// a line of its own); continuation lines start with `indent` spaces.
pub fn wrap_words(text: &str, width: usize, indent: usize) -> Vec<String> {
    let pad = " ".repeat(indent);
    text.lines()
        .flat_map(|para| crate::text::lines("", para.split_whitespace(), &pad, width, crate::text::Count::Columns))
        .collect()
}

pub struct Progress {
    enabled: bool,
    bar: Option<ProgressBar>,
}

impl Progress {
    /// Shown only when stderr is a terminal and the user did not ask for quiet.
    pub fn new(quiet: bool) -> Progress {
        Progress {
            enabled: !quiet && std::io::stderr().is_terminal(),
            bar: None,
        }
    }

    pub fn start(&mut self, len: u64) {
        if !self.enabled {
            return;
        }
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
        let template = if colors_enabled() {
            "{spinner:.cyan} [{elapsed_precise}] {bar:30.cyan/blue} {pos}/{len} {wide_msg}"
        } else {
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {wide_msg}"
        };
        bar.set_style(
            ProgressStyle::with_template(template)
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        if let Ok(mut active) = ACTIVE.lock() {
            *active = Some(bar.clone());
        }
        self.bar = Some(bar);
    }

    pub fn message(&self, msg: &str) {
        if let Some(b) = &self.bar {
            b.set_message(msg.to_string());
        }
    }

    pub fn inc(&self) {
        if let Some(b) = &self.bar {
            b.inc(1);
        }
    }

    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
            if let Ok(mut active) = ACTIVE.lock() {
                *active = None;
            }
        }
    }
}

/// True unless `NO_COLOR` is set (to anything) or stdout is not a terminal.
pub fn colors_enabled() -> bool {
    std::env::var_os("NO_COLOR").is_none() && console::colors_enabled()
}

#[cfg(test)]
mod tests {
    use super::wrap_words;

    #[test]
    fn warnings_wrap_at_words_within_the_width() {
        let text = "warning: ssh: the budget was spent before 6 bulk subject(s) and 4 handshake subject(s) were measured; they are recorded as skipped (raise --budget)";
        let lines = wrap_words(text, 80, 2);
        assert!(lines.len() == 2 && lines.iter().all(|l| l.chars().count() <= 80), "{lines:?}");
        assert!(lines[1].starts_with("  subject(s)"), "{lines:?}");
        assert_eq!(
            lines.join(" ").split_whitespace().collect::<Vec<_>>(),
            text.split_whitespace().collect::<Vec<_>>()
        );
    }
}

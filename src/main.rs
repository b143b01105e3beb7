//! cipherbench: discover → plan → measure → judge → recommend → report/store.

mod aliases;
mod app;
mod backend;
mod catalog;
mod cli;
mod contest;
mod deadline;
mod diff;
mod discover;
mod error;
mod fleet;
mod interrupt;
mod judge;
mod measure;
mod model;
mod options;
mod plan;
mod plausible;
mod privdir;
mod proc;
mod progress;
mod recommend;
mod report;
mod session;
mod software;
mod stats;
mod store;
#[cfg(test)]
mod testing;
mod text;
mod units;
mod untrusted;

fn main() {
    deadline::mark_process_start();
    let cli = cli::parse();
    if std::env::var_os("NO_COLOR").is_some() {
        console::set_colors_enabled(false);
        console::set_colors_enabled_stderr(false);
    }
    interrupt::install();
    if let Err(e) = app::dispatch(cli) {
        // `| head` closing the pipe is normal, not an error.
        if e.chain().any(|c| {
            c.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
        }) {
            std::process::exit(0);
        }
        eprintln!("cipherbench: error: {}", untrusted::shown_lines(&format!("{e:#}")));
        std::process::exit(error::exit_code(&e));
    }
}

//! What was typed, turned into the plain options of `crate::options` once, at
//! dispatch. The value enums the parser knows (with their help and aliases) stand
//! here for the plain enums the rest of the program uses.

use super::*;
use crate::catalog::Library;
use crate::options::{
    CheckOptions, CommonOptions, CompareOptions, FileOptions, FleetOptions, Format, HistoryOptions, IoMode, ListOptions, RecommendOptions,
    ReportOptions, RunOptions, SpeedOptions, SshOptions, TlsOptions,
};

/// `From<$arg> for $plain` for a value enum and the plain enum with the same
/// variants.
macro_rules! variants_from {
    ($arg:ty => $plain:ty { $($v:ident),+ $(,)? }) => {
        impl From<$arg> for $plain {
            fn from(x: $arg) -> $plain {
                match x {
                    $(<$arg>::$v => <$plain>::$v,)+
                }
            }
        }
    };
}

/// `From<$args> for $options`, field by field: each field as it was parsed, or
/// through the function after its colon. Every field of the options is named (one
/// added to them and not here stops the build).
macro_rules! options_from {
    ($args:ty => $options:ident { $($field:ident $(: $convert:expr)?),+ $(,)? }) => {
        impl From<$args> for $options {
            fn from(parsed: $args) -> Self {
                $options { $($field: options_from!(@value parsed.$field $(, $convert)?)),+ }
            }
        }
    };
    (@value $v:expr) => { $v };
    (@value $v:expr, $convert:expr) => { ($convert)($v) };
}

/// `--lib`: the names of the library registry (`backend::libraries`), each with
/// what it is; a typo is refused with the close names.
pub(super) fn library_arg() -> impl clap::builder::TypedValueParser<Value = Library> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let values = crate::backend::libraries::ALL
        .iter()
        .map(|e| PossibleValue::new(e.name).help(e.about));
    PossibleValuesParser::new(values).map(|name| crate::backend::libraries::named(&name).expect("a registered name"))
}

/// `--for`'s help: every registered target, in the registry's order.
pub(super) fn for_help() -> String {
    let names: Vec<&str> = crate::software::ALL.iter().map(|t| t.name()).collect();
    format!(
        "Config targets for `recommend`: {} (comma-separated; default: all)",
        names.join(", ")
    )
}

/// A whole-document format, as `report --format` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
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

variants_from!(FormatArg => Format { Html, Md, Json, Csv, Text });

/// Where the timed region ends, as `file --mode` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum IoModeArg {
    /// CPU only: the file is already in RAM (page cache), output is not written.
    Memory,
    /// Read the file and write the output file (with fsync), so I/O counts.
    Disk,
}

variants_from!(IoModeArg => IoMode { Memory, Disk });

variants_from!(ListWhat => crate::options::ListWhat { Primitives, CpuCaps, Ssh, Tls });

options_from!(Common => CommonOptions {
    json, export_json, export_csv, export_markdown, db, no_store, budget, quiet, policy, targets, no_validate,
});

options_from!(RunArgs => RunOptions { cpu_caps });

options_from!(SpeedArgs => SpeedOptions { algorithms, bytes, threads, cpu_caps, all, libraries });

options_from!(ListArgs => ListOptions { what: Into::into, library, priority });

options_from!(HistoryArgs => HistoryOptions { limit });

options_from!(ReportArgs => ReportOptions { run, format: |f: Option<FormatArg>| f.map(Format::from), output });

options_from!(CompareArgs => CompareOptions { a, b, fail_on_regression, threshold });

options_from!(SshArgs => SshOptions {
    ciphers, macs, kex, hostkeys, bytes, full_matrix, no_handshakes, verify, host, port, identity, ssh_options, cpu_caps,
    serve, compare_sweeps,
});

options_from!(FileArgs => FileOptions {
    paths, size, ciphers, all, mode: IoMode::from, reps, password, pbkdf2_iter, via_openssl_cli, output_dir, chunk,
});

options_from!(RecommendArgs => RecommendOptions { run, no_pool });

options_from!(TlsArgs => TlsOptions {
    suites, groups, certs, protocols, write_size, bytes, threads, full_matrix, both_directions, no_handshakes, no_bulk,
    verify, connect, sni, http_get, timeout, libraries, priority, serve,
});

options_from!(FleetArgs => FleetOptions { paths, ansible_vars, export_html, max_export_size });

options_from!(CheckArgs => CheckOptions { config_from, min_gain, export_prom, verbose });

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::ListWhat as What;

    /// The parsed command, typed `cipherbench ARGS`.
    fn parsed(args: &[&str]) -> (CommonOptions, Command) {
        let cli =
            Cli::try_parse_from(std::iter::once("cipherbench").chain(args.iter().copied())).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        (cli.common.into(), cli.command.expect("a subcommand"))
    }

    /// Each options type's `Default` is what the command line gives when nothing
    /// is typed (the required values aside), so the two cannot drift apart.
    #[test]
    fn defaults_are_the_command_lines() {
        let (common, cmd) = parsed(&["run"]);
        assert_eq!(common, CommonOptions::default());
        let Command::Run(a) = cmd else { panic!() };
        assert_eq!(RunOptions::from(a), RunOptions::default());
        let Command::Speed(a) = parsed(&["speed"]).1 else { panic!() };
        assert_eq!(SpeedOptions::from(a), SpeedOptions::default());
        let Command::List(a) = parsed(&["list", "primitives"]).1 else {
            panic!()
        };
        assert_eq!(ListOptions::from(a), ListOptions::default());
        let Command::History(a) = parsed(&["history"]).1 else { panic!() };
        assert_eq!(HistoryOptions::from(a), HistoryOptions::default());
        let Command::Report(a) = parsed(&["report"]).1 else { panic!() };
        assert_eq!(ReportOptions::from(a), ReportOptions::default());
        let Command::Compare(a) = parsed(&["compare", "", ""]).1 else {
            panic!()
        };
        assert_eq!(CompareOptions::from(a), CompareOptions::default());
        let Command::Ssh(a) = parsed(&["ssh"]).1 else { panic!() };
        assert_eq!(SshOptions::from(a), SshOptions::default());
        let Command::File(a) = parsed(&["file"]).1 else { panic!() };
        assert_eq!(FileOptions::from(a), FileOptions::default());
        let Command::Recommend(a) = parsed(&["recommend"]).1 else {
            panic!()
        };
        assert_eq!(RecommendOptions::from(a), RecommendOptions::default());
        let Command::Tls(a) = parsed(&["tls"]).1 else { panic!() };
        assert_eq!(TlsOptions::from(a), TlsOptions::default());
        let Command::Fleet(a) = parsed(&["fleet", "x"]).1 else { panic!() };
        let fleet = FleetOptions {
            paths: vec!["x".into()],
            ..FleetOptions::default()
        };
        assert_eq!(FleetOptions::from(a), fleet);
        let Command::Check(a) = parsed(&["check"]).1 else { panic!() };
        assert_eq!(CheckOptions::from(a), CheckOptions::default());
    }

    #[test]
    fn value_enums_become_the_plain_ones() {
        let Command::Tls(a) = parsed(&["tls", "--lib", "gnutls,openssl"]).1 else {
            panic!()
        };
        assert_eq!(
            TlsOptions::from(a).libraries,
            [crate::backend::libraries::named("gnutls").unwrap(), Library::DEFAULT]
        );
        let Command::Report(a) = parsed(&["report", "--format", "markdown"]).1 else {
            panic!()
        };
        assert_eq!(ReportOptions::from(a).format, Some(Format::Md));
        let Command::File(a) = parsed(&["file", "--mode", "disk"]).1 else {
            panic!()
        };
        assert_eq!(FileOptions::from(a).mode, IoMode::Disk);
        let Command::List(a) = parsed(&["list", "cpu-caps", "--lib", "gnutls"]).1 else {
            panic!()
        };
        let l = ListOptions::from(a);
        assert_eq!(
            (l.what, l.library),
            (What::CpuCaps, crate::backend::libraries::named("gnutls").unwrap())
        );
        let (common, _) = parsed(&["--budget", "2m", "--for", "nginx,sshd", "-q", "history"]);
        assert_eq!(common.budget, Some(Seconds(120.0)));
        assert_eq!(
            (common.targets, common.quiet),
            (vec!["nginx".to_string(), "sshd".to_string()], true)
        );
    }
}

//! What was typed, turned into the plain options of `crate::options` once, at
//! dispatch. The value enums the parser knows (with their help and aliases) stand
//! here for the plain enums the rest of the program uses.

use super::*;
use crate::catalog::Library;
use crate::options::{
    CheckOptions, CommonOptions, CompareOptions, FileOptions, FleetOptions, Format, HistoryOptions, IoMode, ListOptions, RecommendOptions,
    ReportOptions, RunOptions, SpeedOptions, SshOptions, TlsOptions,
};

/// A library, as `--lib` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LibraryArg {
    /// The system OpenSSL (libcrypto), through the `openssl` crate.
    Openssl,
    /// The system GnuTLS (libgnutls.so.30), loaded at run time.
    Gnutls,
}

impl From<LibraryArg> for Library {
    fn from(l: LibraryArg) -> Library {
        match l {
            LibraryArg::Openssl => Library::Openssl,
            LibraryArg::Gnutls => Library::Gnutls,
        }
    }
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

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Html => Format::Html,
            FormatArg::Md => Format::Md,
            FormatArg::Json => Format::Json,
            FormatArg::Csv => Format::Csv,
            FormatArg::Text => Format::Text,
        }
    }
}

/// Where the timed region ends, as `file --mode` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum IoModeArg {
    /// CPU only: the file is already in RAM (page cache), output is not written.
    Memory,
    /// Read the file and write the output file (with fsync), so I/O counts.
    Disk,
}

impl From<IoModeArg> for IoMode {
    fn from(m: IoModeArg) -> IoMode {
        match m {
            IoModeArg::Memory => IoMode::Memory,
            IoModeArg::Disk => IoMode::Disk,
        }
    }
}

impl From<ListWhat> for crate::options::ListWhat {
    fn from(w: ListWhat) -> Self {
        match w {
            ListWhat::Primitives => Self::Primitives,
            ListWhat::CpuCaps => Self::CpuCaps,
            ListWhat::Ssh => Self::Ssh,
            ListWhat::Tls => Self::Tls,
        }
    }
}

fn libraries(l: Vec<LibraryArg>) -> Vec<Library> {
    l.into_iter().map(Library::from).collect()
}

impl From<Common> for CommonOptions {
    fn from(c: Common) -> Self {
        CommonOptions {
            json: c.json,
            export_json: c.export_json,
            export_csv: c.export_csv,
            export_markdown: c.export_markdown,
            db: c.db,
            no_store: c.no_store,
            budget: c.budget,
            quiet: c.quiet,
            policy: c.policy,
            targets: c.targets,
            no_validate: c.no_validate,
        }
    }
}

impl From<RunArgs> for RunOptions {
    fn from(a: RunArgs) -> Self {
        RunOptions { cpu_caps: a.cpu_caps }
    }
}

impl From<SpeedArgs> for SpeedOptions {
    fn from(a: SpeedArgs) -> Self {
        SpeedOptions {
            algorithms: a.algorithms,
            bytes: a.bytes,
            threads: a.threads,
            cpu_caps: a.cpu_caps,
            all: a.all,
            libraries: libraries(a.libraries),
        }
    }
}

impl From<ListArgs> for ListOptions {
    fn from(a: ListArgs) -> Self {
        ListOptions {
            what: a.what.into(),
            library: a.library.into(),
            priority: a.priority,
        }
    }
}

impl From<HistoryArgs> for HistoryOptions {
    fn from(a: HistoryArgs) -> Self {
        HistoryOptions { limit: a.limit }
    }
}

impl From<ReportArgs> for ReportOptions {
    fn from(a: ReportArgs) -> Self {
        ReportOptions {
            run: a.run,
            format: a.format.map(Format::from),
            output: a.output,
        }
    }
}

impl From<CompareArgs> for CompareOptions {
    fn from(a: CompareArgs) -> Self {
        CompareOptions {
            a: a.a,
            b: a.b,
            fail_on_regression: a.fail_on_regression,
            threshold: a.threshold,
        }
    }
}

impl From<SshArgs> for SshOptions {
    fn from(a: SshArgs) -> Self {
        SshOptions {
            ciphers: a.ciphers,
            macs: a.macs,
            kex: a.kex,
            hostkeys: a.hostkeys,
            bytes: a.bytes,
            full_matrix: a.full_matrix,
            no_handshakes: a.no_handshakes,
            verify: a.verify,
            host: a.host,
            port: a.port,
            identity: a.identity,
            ssh_options: a.ssh_options,
            cpu_caps: a.cpu_caps,
            serve: a.serve,
            compare_sweeps: a.compare_sweeps,
        }
    }
}

impl From<FileArgs> for FileOptions {
    fn from(a: FileArgs) -> Self {
        FileOptions {
            paths: a.paths,
            size: a.size,
            ciphers: a.ciphers,
            all: a.all,
            mode: a.mode.into(),
            reps: a.reps,
            password: a.password,
            pbkdf2_iter: a.pbkdf2_iter,
            via_openssl_cli: a.via_openssl_cli,
            output_dir: a.output_dir,
            chunk: a.chunk,
        }
    }
}

impl From<RecommendArgs> for RecommendOptions {
    fn from(a: RecommendArgs) -> Self {
        RecommendOptions { run: a.run }
    }
}

impl From<TlsArgs> for TlsOptions {
    fn from(a: TlsArgs) -> Self {
        TlsOptions {
            suites: a.suites,
            groups: a.groups,
            certs: a.certs,
            protocols: a.protocols,
            write_size: a.write_size,
            bytes: a.bytes,
            threads: a.threads,
            full_matrix: a.full_matrix,
            both_directions: a.both_directions,
            no_handshakes: a.no_handshakes,
            no_bulk: a.no_bulk,
            verify: a.verify,
            connect: a.connect,
            sni: a.sni,
            http_get: a.http_get,
            timeout: a.timeout,
            libraries: libraries(a.libraries),
            priority: a.priority,
            serve: a.serve,
        }
    }
}

impl From<FleetArgs> for FleetOptions {
    fn from(a: FleetArgs) -> Self {
        FleetOptions {
            paths: a.paths,
            ansible_vars: a.ansible_vars,
            export_html: a.export_html,
            max_export_size: a.max_export_size,
        }
    }
}

impl From<CheckArgs> for CheckOptions {
    fn from(a: CheckArgs) -> Self {
        CheckOptions {
            config_from: a.config_from,
            min_gain: a.min_gain,
            export_prom: a.export_prom,
            verbose: a.verbose,
        }
    }
}

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
        assert_eq!(TlsOptions::from(a).libraries, [Library::Gnutls, Library::Openssl]);
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
        assert_eq!((l.what, l.library), (What::CpuCaps, Library::Gnutls));
        let (common, _) = parsed(&["--budget", "2m", "--for", "nginx,sshd", "-q", "history"]);
        assert_eq!(common.budget, Some(Seconds(120.0)));
        assert_eq!(
            (common.targets, common.quiet),
            (vec!["nginx".to_string(), "sshd".to_string()], true)
        );
    }
}

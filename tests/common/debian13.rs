//! A cached Debian 13 (trixie) root for the tests that run cipherbench against
//! Debian 13's OpenSSL 3.5, GnuTLS 3.8, OpenSSH 10 and nginx (issue 27). It is built
//! once by `scripts/debian13-root.sh` under [`DEFAULT_DIR`] (or
//! `CIPHERBENCH_DEBIAN13_ROOT`), outside the clone so that every clone and CI run
//! reuses it, and reused; every command runs inside it through the
//! same script, in a private mount namespace.

// Each test crate uses its own part of this module.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The project's checkout.
fn project() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn script() -> PathBuf {
    project().join("scripts/debian13-root.sh")
}

/// Where the root is cached when `CIPHERBENCH_DEBIAN13_ROOT` is not set (only root
/// builds it, so a system cache directory; the Makefile's `debian13-root` agrees).
pub const DEFAULT_DIR: &str = "/var/cache/cipherbench/debian13-root";

/// A finished Debian 13 root.
pub struct Root {
    pub dir: PathBuf,
}

/// Why a test cannot have the root: not root is a skip everywhere (the machine
/// cannot do it); a failed build skips elsewhere but fails under `CI=true`, where
/// the tests run as root with Debian's mirrors reachable.
fn unavailable(why: &str) -> Option<Root> {
    eprintln!("skipped: {why}");
    None
}

impl Root {
    /// Builds the root (minutes, once) or reuses the cached one; `None` after a
    /// `skipped: ...` line when this machine cannot.
    pub fn get() -> Option<Root> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return unavailable("a Debian 13 root needs root (debootstrap, chroot and mount): run the test as root");
        }
        let dir = std::env::var_os("CIPHERBENCH_DEBIAN13_ROOT")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(DEFAULT_DIR));
        let t = Instant::now();
        let out = Command::new(script())
            .arg(&dir)
            .stdin(Stdio::null())
            .output()
            .expect("scripts/debian13-root.sh");
        if !out.status.success() {
            let why = format!(
                "scripts/debian13-root.sh {} failed ({}):\n{}",
                dir.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("{why}under CI=true the Debian 13 root must build");
            }
            return unavailable(&why);
        }
        if t.elapsed() > Duration::from_secs(10) {
            eprintln!("built the Debian 13 root {} in {:.0?}", dir.display(), t.elapsed());
        }
        Some(Root { dir })
    }

    /// A path inside the root, from its absolute path there (`/usr/local/bin/x`).
    pub fn path(&self, inside: &str) -> PathBuf {
        self.dir.join(inside.trim_start_matches('/'))
    }

    /// Copies the host's `cipherbench` (the binary under test) to `inside`. Through a
    /// temporary name and a rename, so a copy still running there is never written to.
    pub fn install_binary(&self, inside: &str) {
        let to = self.path(inside);
        let tmp = to.with_extension(format!("tmp{}", std::process::id()));
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(env!("CARGO_BIN_EXE_cipherbench"), &tmp).unwrap();
        std::fs::rename(&tmp, &to).unwrap();
    }

    /// A fresh directory inside the root (under /tmp), removed when dropped; its path
    /// inside the root is `.inside`.
    pub fn tempdir(&self) -> InsideDir {
        let tmp = self.path("/tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let d = tempfile::Builder::new().prefix("cb-deb13-").tempdir_in(&tmp).unwrap();
        let inside = format!("/tmp/{}", d.path().file_name().unwrap().to_string_lossy());
        InsideDir { dir: d, inside }
    }

    /// Runs `args` inside the root (as root, with /proc, /sys and /dev mounted for
    /// it alone, `HOME=/root`, a clean environment); killed with its whole process
    /// group after `limit`. Returns its output and how long it took.
    pub fn run(&self, args: &[&str], limit: Duration) -> (Output, Duration) {
        let t = Instant::now();
        let out = Command::new("timeout")
            .args(["-k", "5", &format!("{}", limit.as_secs().max(1))])
            .arg(script())
            .arg(&self.dir)
            .arg("--")
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("timeout(1) and scripts/debian13-root.sh");
        (out, t.elapsed())
    }

    /// The root's package versions (`.versions`: "package version" lines).
    pub fn version_of(&self, package: &str) -> Option<String> {
        let v = std::fs::read_to_string(self.dir.join(".versions")).ok()?;
        v.lines().find_map(|l| l.strip_prefix(&format!("{package} ")).map(str::to_string))
    }
}

/// A directory under the root's /tmp.
pub struct InsideDir {
    pub dir: tempfile::TempDir,
    /// Its path as seen inside the root.
    pub inside: String,
}

impl InsideDir {
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Output as text, for assertion messages.
pub fn text(out: &Output) -> String {
    format!(
        "{}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

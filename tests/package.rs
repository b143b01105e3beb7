//! The Debian package (issue 39), as a user gets it: `scripts/make-deb.sh` packages the
//! binary under test, and in clean Debian 12 and forky roots and in the Debian 13 root
//! `apt install ./cipherbench_*.deb` pulls what it needs, `cipherbench --budget 20s`
//! answers (exit 0 and a TLS line), and `apt purge cipherbench` leaves none of the
//! package's files. An arm64 package made by `make deb ARCH=arm64` is installed in an
//! arm64 Debian 13 root under qemu-user (OpenSSL, OpenSSH and GnuTLS installed there
//! once: emulated, their installation takes minutes), where the main job with AES
//! masked must read the CPU's features from the aux vector, mask them through
//! OPENSSL_armcap, put ChaCha20 first and answer within its budget + 10%. A package
//! built against Debian experimental's OpenSSL 4 by `make openssl4`
//! (scripts/openssl4.sh), when it exists, installs in the clean forky root with
//! experimental's archives (a kept layer) and must pull libssl4 and answer.
//!
//! Every command runs in a throw-away overlay of a cached root
//! (`scripts/pkg-root.sh run`: an overlayfs with a tmpfs upper layer in a private
//! mount namespace), so the cached roots are never written. The Debian 12 and forky
//! roots (`debootstrap --variant=minbase`, with only the archives of what the
//! package pulls in their apt cache) and the arm64 one are built once (one to five
//! minutes each) under /var/cache/cipherbench; the Debian 13 root is
//! scripts/debian13-root.sh's.
//!
//! Needs root (chroot, mount): otherwise each test prints a `skipped:` line. A root
//! that cannot be built skips with its error, and fails under `CI=true`.

#[path = "common/debian.rs"]
mod debian;
#[path = "common/ports.rs"]
mod ports;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

fn project() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn text(out: &Output) -> String {
    debian::text(out)
}

/// Under `CI=true` a root or tool the test needs must be there; elsewhere a skip.
fn cannot(why: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{why}; under CI=true it must work");
    }
    eprintln!("skipped: {why}");
}

/// The package of the binary under test, made once for the file's tests by
/// scripts/make-deb.sh (uncompressed: made in a second, thrown away), in a
/// directory that lives as long as the test binary.
fn package() -> &'static Path {
    static DEB: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, deb) = DEB.get_or_init(|| {
        let dir = tempfile::Builder::new().prefix("cb-deb-").tempdir().unwrap();
        let out = Command::new(project().join("scripts/make-deb.sh"))
            .args(["--bin", env!("CARGO_BIN_EXE_cipherbench"), "--out"])
            .arg(dir.path())
            .env("CB_DEB_COMPRESSION", "none")
            .stdin(Stdio::null())
            .output()
            .expect("scripts/make-deb.sh");
        assert!(out.status.success(), "make-deb.sh: {}", text(&out));
        let deb = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        assert!(deb.is_file(), "no {}", deb.display());
        (dir, deb)
    });
    deb
}

/// A cached clean root of `suite` for `arch` (scripts/pkg-root.sh build).
fn pkg_root(suite: &str, arch: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(format!(
        "/var/cache/cipherbench/{}-root",
        match (suite, arch) {
            ("bookworm", "amd64") => "debian12".to_string(),
            ("trixie", a) => format!("debian13-{a}"),
            (s, a) => format!("{s}-{a}"),
        }
    ));
    let t = Instant::now();
    let out = Command::new(project().join("scripts/pkg-root.sh"))
        .args(["build", suite, arch])
        .arg(&dir)
        .stdin(Stdio::null())
        .output()
        .expect("scripts/pkg-root.sh");
    if !out.status.success() {
        cannot(&format!("scripts/pkg-root.sh build {suite} {arch} failed: {}", text(&out)));
        return None;
    }
    if t.elapsed() > Duration::from_secs(10) {
        eprintln!("built the {suite} {arch} root {} in {:.0?}", dir.display(), t.elapsed());
    }
    Some(dir)
}

/// Runs `script` with `sh -eu` in a throw-away overlay of `root`, the package's
/// directory at /pkg; killed after `limit`.
fn in_overlay(root: &Path, deb: &Path, script: &str, limit: Duration) -> (Output, Duration) {
    in_layered_overlay(root, &[], deb, script, limit)
}

/// [`in_overlay`] with kept `layers` (`scripts/pkg-root.sh run --layer`) stacked
/// read-only over `root`.
fn in_layered_overlay(root: &Path, layers: &[&Path], deb: &Path, script: &str, limit: Duration) -> (Output, Duration) {
    let t = Instant::now();
    let mut cmd = Command::new("timeout");
    cmd.args(["-k", "5", &limit.as_secs().to_string()])
        .arg(project().join("scripts/pkg-root.sh"))
        .arg("run")
        .arg(root);
    for l in layers {
        cmd.arg("--layer").arg(l);
    }
    let out = cmd
        .arg("--bind")
        .arg(format!("{}:/pkg", deb.parent().unwrap().display()))
        .args(["--", "/bin/sh", "-euc", script])
        .stdin(Stdio::null())
        .output()
        .expect("timeout(1) and scripts/pkg-root.sh");
    (out, t.elapsed())
}

/// The script every root runs: install with apt from the file, list the package's
/// files, run the main job (`run_args`), purge, and say which of the listed files
/// are still there. Each step prints a marker line the test looks for.
fn install_run_purge(deb: &Path, run_args: &str) -> String {
    let name = deb.file_name().unwrap().to_string_lossy();
    let wanted = WANTED.join(" ");
    format!(
        "cd /pkg; apt install -y ./{name} >/tmp/apt.log 2>&1 || {{ cat /tmp/apt.log; exit 1; }}; echo installed; \
         dpkg -L cipherbench > /tmp/files; \
         for p in {wanted}; do if grep -qx \"$p\" /tmp/files && [ -s \"$p\" ]; then echo \"has: $p\"; fi; done; \
         dpkg-query -W -f='${{Package}} ${{Status}}\\n' libssl3 libssl3t64 libssl4 openssl openssh-server 2>/dev/null | sed 's/^/pkg: /'; \
         echo \"depends: $(dpkg-query -W -f='${{Depends}}' cipherbench)\"; \
         cd /root; rc=0; start=$(date +%s); cipherbench {run_args} > /tmp/run.out 2> /tmp/run.err || rc=$?; \
         echo \"main-job: rc=$rc in $(( $(date +%s) - start )) s\"; sed 's/^/out: /' /tmp/run.out; sed 's/^/err: /' /tmp/run.err | tail -20; \
         apt purge -y cipherbench > /tmp/purge.log 2>&1 || {{ cat /tmp/purge.log; exit 1; }}; echo purged; \
         dpkg-query -W -f='${{Status}}\\n' cipherbench 2>/dev/null | sed 's/^/status: /' || true; \
         while read -r f; do if [ -e \"$f\" ] && [ ! -d \"$f\" ]; then echo \"left: $f\"; fi; done < /tmp/files; \
         for d in /usr/share/cipherbench /usr/share/doc/cipherbench; do if [ -e $d ]; then echo \"left: $d\"; fi; done; \
         echo \"listed: $(grep -c . /tmp/files)\""
    )
}

/// Files the package must install, each non-empty.
const WANTED: &[&str] = &[
    "/usr/bin/cipherbench",
    "/usr/share/man/man1/cipherbench.1.gz",
    "/usr/share/bash-completion/completions/cipherbench",
    "/usr/share/zsh/vendor-completions/_cipherbench",
    "/usr/share/fish/vendor_completions.d/cipherbench.fish",
    "/usr/share/doc/cipherbench/copyright",
    "/usr/share/doc/cipherbench/changelog.gz",
    "/usr/share/doc/cipherbench/README.md",
    "/usr/share/cipherbench/ansible/profile.yml",
    "/usr/share/cipherbench/ansible/roles/cipherbench_profile/tasks/main.yml",
];

/// What every root must show: installed, each of [`WANTED`] in the package, the main job's exit 0 and a TLS answer
/// line, purged with nothing left of the (listed) files.
fn assert_installed_answered_purged(said: &str, out: &Output) {
    for want in ["installed", "main-job: rc=0", "purged"] {
        assert!(said.lines().any(|l| l.starts_with(want)), "no `{want}`:\n{}", text(out));
    }
    assert!(
        said.lines()
            .any(|l| l.starts_with("out:   TLS 1.3 suites") || l.starts_with("out:   TLS 1.2 suites")),
        "no TLS answer line:\n{}",
        text(out)
    );
    for f in WANTED {
        assert!(
            said.lines().any(|l| l == format!("has: {f}")),
            "the package lacks {f} (or it is empty):\n{}",
            text(out)
        );
    }
    let left: Vec<&str> = said.lines().filter(|l| l.starts_with("left: ")).collect();
    assert!(left.is_empty(), "apt purge left {left:?}:\n{}", text(out));
    let listed: usize = said
        .lines()
        .find_map(|l| l.strip_prefix("listed: "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    // The binary, 1 + ~20 man pages, 3 completions, docs, playbooks: the list is the
    // package's, not an empty file that would make "nothing left" vacuous.
    assert!(listed > 40, "dpkg -L listed {listed} entries:\n{}", text(out));
    assert!(
        !said.lines().any(|l| l.starts_with("status: install ok")),
        "still installed after purge:\n{}",
        text(out)
    );
}

/// Debian 12: a clean minbase root where neither libssl3, openssl nor OpenSSH is
/// installed: apt pulls them through the package's Depends and Recommends.
#[test]
fn debian12_installs_answers_and_purges() {
    if !is_root() {
        eprintln!("skipped: installing a package in a Debian root needs root (chroot and mount)");
        return;
    }
    let Some(root) = pkg_root("bookworm", "amd64") else { return };
    let deb = package();
    let (out, took) = in_overlay(&root, deb, &install_run_purge(deb, "--budget 20s"), Duration::from_secs(150));
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{}", text(&out));
    assert_installed_answered_purged(&said, &out);
    for pulled in ["libssl3", "openssl", "openssh-server"] {
        assert!(
            said.lines().any(|l| l == format!("pkg: {pulled} install ok installed")),
            "{pulled} was not pulled in:\n{}",
            text(&out)
        );
    }
    // Built on Debian 12: libssl3 (>= 3.0.x), which Debian 13's libssl3t64 provides.
    let depends = said.lines().find_map(|l| l.strip_prefix("depends: ")).unwrap_or("");
    assert!(depends.contains("libssl3 (>= 3."), "{depends}");
    eprintln!("Debian 12: install, main job, purge in {took:.0?}");
}

/// Debian 13: the same package (its Depends name libssl3; Debian 13 has only
/// libssl3t64, which Provides libssl3 at its version) installs and answers.
#[test]
fn debian13_installs_the_same_package_answers_and_purges() {
    if !is_root() {
        eprintln!("skipped: installing a package in a Debian root needs root (chroot and mount)");
        return;
    }
    let Some(root) = debian::Root::get(&debian::DEBIAN13) else { return };
    let deb = package();
    let (out, took) = in_overlay(&root.dir, deb, &install_run_purge(deb, "--budget 20s"), Duration::from_secs(150));
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{}", text(&out));
    assert_installed_answered_purged(&said, &out);
    assert!(said.lines().any(|l| l == "pkg: libssl3t64 install ok installed"), "{}", text(&out));
    eprintln!("Debian 13: install, main job, purge in {took:.0?}");
}

/// Debian forky (testing, the next stable): the same package in a clean minbase
/// forky root. forky's minbase already has libssl3t64 (apt 3 links OpenSSL), so
/// only openssl and OpenSSH are pulled; its libssl3t64 provides libssl3 as Debian
/// 13's does.
#[test]
fn forky_installs_the_same_package_answers_and_purges() {
    if !is_root() {
        eprintln!("skipped: installing a package in a Debian root needs root (chroot and mount)");
        return;
    }
    let Some(root) = pkg_root("forky", "amd64") else { return };
    let deb = package();
    let (out, took) = in_overlay(&root, deb, &install_run_purge(deb, "--budget 20s"), Duration::from_secs(150));
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{}", text(&out));
    assert_installed_answered_purged(&said, &out);
    for pulled in ["libssl3t64", "openssl", "openssh-server"] {
        assert!(
            said.lines().any(|l| l == format!("pkg: {pulled} install ok installed")),
            "{pulled} is not installed:\n{}",
            text(&out)
        );
    }
    eprintln!("Debian forky: install, main job, purge in {took:.0?}");
}

/// The package `make openssl4` (scripts/openssl4.sh) built against Debian
/// experimental's OpenSSL 4, and the kept layer of the clean forky root with
/// experimental's lists and archives it made, if both exist.
fn openssl4_package() -> Option<(PathBuf, PathBuf)> {
    let deb = project().join(format!("target/openssl4/cipherbench_{}_amd64.deb", env!("CARGO_PKG_VERSION")));
    let layer = PathBuf::from("/var/cache/cipherbench/forky-openssl4-clean");
    (deb.is_file() && layer.with_extension("recipe").is_file() && layer.join("upper").is_dir()).then_some((deb, layer))
}

/// OpenSSL 4 (Debian experimental's libssl4): when `make openssl4` has built the
/// package (minutes: not part of `make test`; otherwise `skipped:`), it installs
/// in a clean forky root with experimental in its sources (apt takes libssl4 from
/// there, the only suite that has it), answers and purges. Its Depends must name
/// libssl4, not libssl3.
#[test]
fn openssl4_package_installs_answers_and_purges_in_forky_with_experimental() {
    if !is_root() {
        eprintln!("skipped: installing a package in a Debian root needs root (chroot and mount)");
        return;
    }
    let Some((deb, layer)) = openssl4_package() else {
        eprintln!("skipped: no target/openssl4/cipherbench_*_amd64.deb and its forky+experimental layer: `make openssl4` makes them (an OpenSSL 4 build of several minutes, not part of make test)");
        return;
    };
    let Some(root) = pkg_root("forky", "amd64") else { return };
    let (out, took) = in_layered_overlay(
        &root,
        &[&layer],
        &deb,
        &install_run_purge(&deb, "--budget 20s"),
        Duration::from_secs(150),
    );
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{}", text(&out));
    assert_installed_answered_purged(&said, &out);
    assert!(
        said.lines().any(|l| l == "pkg: libssl4 install ok installed"),
        "libssl4 was not pulled in:\n{}",
        text(&out)
    );
    let depends = said.lines().find_map(|l| l.strip_prefix("depends: ")).unwrap_or("");
    assert!(depends.contains("libssl4 (>= 4."), "{depends}");
    assert!(!depends.contains("libssl3"), "{depends}");
    eprintln!("OpenSSL 4 in forky+experimental: install, main job, purge in {took:.0?}");
}

/// The arm64 package `make deb ARCH=arm64` made, if any.
fn arm64_package() -> Option<PathBuf> {
    let version = std::fs::read_to_string(project().join("Cargo.toml"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("version = \"").map(|v| v.trim_end_matches('"').to_string()))
        .unwrap();
    let deb = project().join(format!("target/debian/cipherbench_{version}_arm64.deb"));
    deb.is_file().then_some(deb)
}

/// arm64 under qemu-user: /proc/cpuinfo is the host's (no `Features` line), the aux
/// vector is the emulated CPU's (aes, pmull, sha2 ...). The main job with
/// `--cpu-caps no-aesni` must find those features, re-run itself with
/// OPENSSL_armcap lacking AES and PMULL, answer within its budget and put
/// ChaCha20-Poly1305 first (a Raspberry Pi 4 class: no ARMv8 crypto extensions).
/// Behaviour only: no emulated speed is asserted.
#[test]
fn arm64_package_answers_under_qemu_with_aes_masked() {
    if !is_root() {
        eprintln!("skipped: an arm64 root needs root (chroot, mount, binfmt_misc)");
        return;
    }
    let Some(deb) = arm64_package() else {
        eprintln!("skipped: no target/debian/cipherbench_*_arm64.deb: `make deb ARCH=arm64` makes it (a cross build of several minutes, not part of make test)");
        return;
    };
    let Some(root) = pkg_root("trixie", "arm64") else { return };
    // A budget that fits emulation (issue 39). What follows measuring runs 10-20
    // times slower emulated; the main job keeps time for it in proportion to its
    // discovery (app::main_job::after_measuring): 60 s took 61-68 s with it, 70-74 s
    // without.
    let budget = 60;
    let script = install_run_purge(
        &deb,
        &format!("run --budget {budget}s --cpu-caps no-aesni --export-json /tmp/run.json"),
    )
    .replace(
        "apt purge",
        "grep -c '^Features' /proc/cpuinfo | sed 's/^/cpuinfo-features: /' || true; printf 'json: '; tr -d '\\n' < /tmp/run.json; echo; apt purge",
    );
    let (out, took) = in_overlay(&root, &deb, &script, Duration::from_secs(400));
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{}", text(&out));
    assert_installed_answered_purged(&said, &out);
    let json: Value = said
        .lines()
        .find_map(|l| l.strip_prefix("json: "))
        .map(|j| serde_json::from_str(j).expect("the export is JSON"))
        .unwrap_or_else(|| panic!("no export:\n{}", text(&out)));
    let host = &json["run"]["host"];
    assert_eq!(host["arch"], "aarch64", "{host}");
    // /proc/cpuinfo is the x86 host's under qemu-user: its model is not the CPU's.
    let model = host["cpu_model"].as_str().unwrap_or_default();
    assert!(model.starts_with("aarch64 CPU, emulated"), "cpu_model {model:?}");
    let flags: Vec<&str> = host["cpu_flags"].as_array().unwrap().iter().filter_map(|f| f.as_str()).collect();
    for f in ["aes", "pmull", "sha2", "asimd"] {
        assert!(flags.contains(&f), "{f} not among {flags:?} (the aux vector)");
    }
    let armcap = json["run"]["settings"]["OPENSSL_armcap"]
        .as_str()
        .unwrap_or_else(|| panic!("{json}"));
    let bits = u32::from_str_radix(armcap.trim_start_matches("0x"), 16).unwrap();
    assert_eq!(bits & ((1 << 2) | (1 << 5)), 0, "AES or PMULL left in OPENSSL_armcap={armcap}");
    assert_ne!(bits & (1 << 0), 0, "NEON masked too: OPENSSL_armcap={armcap}");
    let tls13 = said
        .lines()
        .skip_while(|l| !l.starts_with("out:   TLS 1.3 suites"))
        .take(2)
        .collect::<Vec<_>>()
        .join(" ");
    let chacha = tls13.find("TLS_CHACHA20_POLY1305_SHA256");
    let aes = tls13.find("TLS_AES_");
    assert!(
        chacha.is_some() && aes.is_none_or(|a| chacha.unwrap() < a),
        "ChaCha20 is not first with AES masked: {tls13}\n{}",
        text(&out)
    );
    let secs: u64 = said
        .lines()
        .find_map(|l| l.strip_prefix("main-job: rc=0 in "))
        .and_then(|s| s.trim_end_matches(" s").parse().ok())
        .unwrap();
    // The bound: the budget + 10%. What follows measuring (recommend, the
    // installed diff, the answer and the report) runs 10-20 times slower emulated and
    // the deadline keeps for it only a share of the grace sized for native speed: a
    // short budget overruns (above).
    assert!(
        secs * 10 <= budget * 11,
        "the main job took {secs} s for a {budget} s budget (the limit is the budget + 10%)"
    );
    eprintln!("arm64 under qemu: install, main job ({secs} s for {budget} s), purge in {took:.0?}");
}

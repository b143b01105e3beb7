//! A mixed amd64 + arm64 fleet (issue 39), with the real engine: Ansible over real
//! SSH to inventory hosts on 127.0.0.N, as in tests/fleet.rs, one of which runs
//! arm64: its private sshd's sessions run chrooted (sshd's ChrootDirectory) in a
//! throw-away overlay of the cached arm64 Debian 13 root, where `uname -m` says
//! aarch64 under qemu-user, and dpkg, apt-get and cipherbench there are the root's
//! arm64 binaries (`scripts/fleet-chroot-host.sh serve`; the cached root is never
//! written). Ansible's modules on that host run with this machine's python3,
//! bind-mounted read-only into the chroot: emulated, python3 made each module take
//! 10-30 s (558 s for one play); this way the play takes about a minute. Another
//! host is a chroot in the amd64 Debian 13 root: a dpkg database of its own.
//!
//! Both tests run only when the arm64 build exists
//! (`target/debian/cipherbench_VERSION_arm64.deb`, which `make deb ARCH=arm64` makes:
//! a cross build of minutes, not part of `make test`), and as root (chroot, mount,
//! binfmt_misc); otherwise each prints `skipped:` and costs nothing. They assert
//! behaviour, never emulated speed: which build each host got, which architecture
//! its export names, its class, that a class has its own answer, and that what the
//! play installed is gone afterwards while what the host had stays.

#[path = "common/fleet.rs"]
mod hosts;
#[path = "common/ports.rs"]
mod ports;

use hosts::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;

/// The arm64 package `make deb ARCH=arm64` made, if any.
fn arm64_package() -> Option<PathBuf> {
    let version = std::fs::read_to_string(repo().join("Cargo.toml"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("version = \"").map(|v| v.trim_end_matches('"').to_string()))
        .unwrap();
    let deb = repo().join(format!("target/debian/cipherbench_{version}_arm64.deb"));
    deb.is_file().then_some(deb)
}

/// The gate both tests share: root, the arm64 build, and the arm64 root (built once
/// by scripts/pkg-root.sh, as tests/package.rs does; a failure to build it skips,
/// and fails under `CI=true`).
fn arm64_ready(what: &str) -> Option<PathBuf> {
    if !is_root() {
        eprintln!("skipped: {what} needs root (chroot, mount, binfmt_misc)");
        return None;
    }
    let Some(deb) = arm64_package() else {
        eprintln!(
            "skipped: {what}: no target/debian/cipherbench_*_arm64.deb (`make deb ARCH=arm64` makes it; a cross build, not part of make test)"
        );
        return None;
    };
    let t = Instant::now();
    let out = Command::new(repo().join("scripts/fleet-chroot-host.sh"))
        .arg("root")
        .stdin(Stdio::null())
        .output()
        .expect("scripts/fleet-chroot-host.sh");
    if !out.status.success() {
        missing(&format!("{what}: scripts/fleet-chroot-host.sh root failed: {}", text(&out)));
        return None;
    }
    if t.elapsed().as_secs() > 10 {
        eprintln!("built the arm64 root in {:.0?}", t.elapsed());
    }
    Some(deb)
}

/// The amd64 package of the binary under test (uncompressed: made in a second).
fn amd64_package(dir: &Path) -> PathBuf {
    let out = Command::new(repo().join("scripts/make-deb.sh"))
        .args(["--bin", env!("CARGO_BIN_EXE_cipherbench"), "--arch", "amd64", "--out"])
        .arg(dir)
        .env("CB_DEB_COMPRESSION", "none")
        .stdin(Stdio::null())
        .output()
        .expect("scripts/make-deb.sh");
    assert!(out.status.success(), "make-deb.sh: {}", text(&out));
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

fn fleet_json(results: &Path) -> (Output, Value) {
    let out = Command::new(bin())
        .args(["fleet", "--json", "--no-store"])
        .arg(results)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("fleet --json: {e}: {}", text(&out)));
    (out, v)
}

fn arch_of(results: &Path, host: &str) -> String {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(results.join(format!("{host}.json"))).unwrap()).unwrap();
    v["run"]["host"]["arch"].as_str().unwrap_or("").to_string()
}

/// Runs `script` with `sh -c` on `h` over a fresh SSH login (inside the arm64 chroot
/// for the arm64 host).
fn on_host(f: &Fleet, h: &HostSshd, script: &str) -> Output {
    Command::new("ssh")
        .args(["-o", "ControlMaster=no", "-o", "ControlPath=none", "-o", "BatchMode=yes"])
        .args(["-o", "IdentitiesOnly=yes", "-o", "StrictHostKeyChecking=yes"])
        .arg("-o")
        .arg(format!("UserKnownHostsFile={}", f.known_hosts().display()))
        .arg("-i")
        .arg(f.client_key())
        .arg("-p")
        .arg(h.port.to_string())
        .arg("-l")
        .arg(current_user())
        .arg(h.addr.to_string())
        .arg(script)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// What a host has of cipherbench: dpkg's status and whether /usr/bin/cipherbench is there.
const WHAT_IS_INSTALLED: &str = "echo \"arch=$(uname -m) dpkg=$(dpkg-query -W -f='${db:Status-Status}' cipherbench 2>/dev/null || echo none) file=$(test -e /usr/bin/cipherbench && echo yes || echo no)\"";

/// A package named cipherbench that the host "already had": dpkg knows it as
/// installed (version 0.0.1-local, one script at /usr/bin/cipherbench).
fn older_package(dir: &Path) -> PathBuf {
    let root = dir.join("older");
    std::fs::create_dir_all(root.join("DEBIAN")).unwrap();
    std::fs::create_dir_all(root.join("usr/bin")).unwrap();
    std::fs::write(
        root.join("DEBIAN/control"),
        "Package: cipherbench\nVersion: 0.0.1-local\nArchitecture: all\nMaintainer: an admin <root@localhost>\n\
Description: the cipherbench this host had before the play\n",
    )
    .unwrap();
    std::fs::write(root.join("usr/bin/cipherbench"), "#!/bin/sh\necho the host's own cipherbench\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(root.join("usr/bin/cipherbench"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let deb = dir.join("cipherbench_0.0.1-local_all.deb");
    let out = Command::new("dpkg-deb")
        .args(["--root-owner-group", "-Znone", "--build"])
        .arg(&root)
        .arg(&deb)
        .output()
        .expect("dpkg-deb");
    assert!(out.status.success(), "dpkg-deb --build: {}", text(&out));
    deb
}

/// Three hosts, each offered what fits it:
/// - 127.0.0.2, amd64 (this machine), offered only the amd64 package and a `sudo`
///   that refuses: it runs the binary extracted from that package on the
///   controller, as the login user (what an admin expects from a host that cannot
///   become root);
/// - 127.0.0.3, arm64 (a chroot in the arm64 root): the arm64 package, installed
///   with become (dpkg) and purged after; `cipherbench_binary` (an x86_64 build)
///   is never copied there;
/// - 127.0.0.4, amd64 (a chroot in the Debian 13 root, a dpkg database of its own)
///   that already has a package named cipherbench installed: offered the amd64
///   package, it gets the binary (`cipherbench_binaries.x86_64`) instead, and its
///   own cipherbench is still installed after the play.
///
/// A fourth host, 127.0.0.5 (x86_64), offered only an aarch64 binary, is named in
/// results/127.0.0.5.failed with its architecture, and the others go on.
///
/// Each export names its architecture; `fleet` makes three classes, each with its
/// own answer; nothing is left on any host, and only the arm64 host became root.
#[test]
fn a_mixed_amd64_and_arm64_fleet_installs_what_fits_each_host_and_removes_it() {
    let Some(arm_deb) = arm64_ready("the mixed amd64 + arm64 fleet") else {
        return;
    };
    let Some(sshd) = sshd_path() else {
        missing("no sshd");
        return;
    };
    if !venv_ok() {
        return;
    }
    let deb13 = Path::new("/var/cache/cipherbench/debian13-root");
    if !deb13.join(".cipherbench-root").exists() {
        eprintln!("skipped: no Debian 13 root (/var/cache/cipherbench/debian13-root; tests/debian13.rs builds it)");
        return;
    }
    let t0 = Instant::now();
    let mut f = Fleet::empty();
    let client_pub = f.client_pub();
    let tmp = f.tmp.path().to_path_buf();
    // The chrooted hosts' sessions see the test's directory at the same path (the
    // remote base, Ansible's remote temp dir, the stand-in for sudo and its log).
    let chroot = |root: Option<&Path>| -> Vec<String> {
        let mut v = vec![repo().join("scripts/fleet-chroot-host.sh").display().to_string(), "serve".into()];
        if let Some(r) = root {
            v.extend(["--root".to_string(), r.display().to_string()]);
        }
        v.extend(["--bind".to_string(), tmp.display().to_string(), "--".to_string()]);
        v
    };
    f.hosts = vec![
        HostSshd::start(&sshd, [127, 0, 0, 2].into(), &tmp, &client_pub),
        HostSshd::start_under(&chroot(None), &sshd, [127, 0, 0, 3].into(), &tmp, &client_pub),
        HostSshd::start_under(&chroot(Some(deb13)), &sshd, [127, 0, 0, 4].into(), &tmp, &client_pub),
        HostSshd::start(&sshd, [127, 0, 0, 5].into(), &tmp, &client_pub),
    ];
    // 127.0.0.5 (x86_64) is offered only an aarch64 binary (an ELF header that says so).
    let mut elf = vec![0u8; 64];
    elf[..8].copy_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0]);
    elf[16] = 2;
    elf[18] = 183;
    let arm_only = tmp.join("cipherbench-aarch64");
    std::fs::write(&arm_only, elf).unwrap();
    let debs = tmp.join("debs");
    let amd_deb = amd64_package(&debs);
    let older = older_package(&debs);
    let no_sudo = tmp.join("no-sudo");
    std::fs::write(&no_sudo, "#!/bin/sh\necho 'sudo: a password is required' >&2\nexit 1\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&no_sudo, std::fs::Permissions::from_mode(0o755)).unwrap();
    let stripped = f.binary();
    f.write_inventory_with(|h| match h.addr.octets()[3] {
        2 => format!(
            "cipherbench_packages='{{\"x86_64\": \"{}\"}}' cipherbench_binary={} ansible_become_exe={}",
            amd_deb.display(),
            tmp.join("no-such-binary").display(),
            no_sudo.display()
        ),
        3 => format!(
            "cipherbench_packages='{{\"aarch64\": \"{}\"}}' cipherbench_binary={} ansible_python_interpreter=/usr/local/bin/native-python3",
            arm_deb.display(),
            stripped.display()
        ),
        4 => format!(
            "cipherbench_packages='{{\"x86_64\": \"{}\"}}' cipherbench_binaries='{{\"x86_64\": \"{}\"}}'",
            amd_deb.display(),
            stripped.display()
        ),
        _ => format!("cipherbench_binary={}", arm_only.display()),
    });
    for h in &f.hosts[..3] {
        let said = text(&on_host(&f, h, WHAT_IS_INSTALLED));
        assert!(
            said.contains("dpkg=none file=no"),
            "{}: cipherbench before the play: {said}",
            h.addr
        );
    }
    let arm_said = text(&on_host(&f, &f.hosts[1], WHAT_IS_INSTALLED));
    assert!(arm_said.contains("arch=aarch64"), "the arm64 host: {arm_said}");
    let pre = on_host(
        &f,
        &f.hosts[2],
        &format!("dpkg -i {} >/dev/null && {WHAT_IS_INSTALLED}", older.display()),
    );
    assert!(
        text(&pre).contains("dpkg=installed file=yes"),
        "127.0.0.4's own cipherbench: {}",
        text(&pre)
    );

    // The controller's directories of extracted binaries (tempfile's, in its temp dir).
    let extracted = || -> Vec<PathBuf> {
        std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("cipherbench-deb."))
            .map(|e| e.path())
            .collect()
    };
    let extracted_before = extracted();
    let results = tmp.join("results");
    let extra = serde_json::json!({
        "cipherbench_results": results,
        "cipherbench_command": "speed",
        "cipherbench_budget_seconds": 3,
        "cipherbench_extra_args": ["aes-128-gcm", "chacha20-poly1305", "--bytes", "16k"],
        "cipherbench_remote_base": f.remote_base(),
        "cipherbench_poll_seconds": 1,
        "cipherbench_grace_seconds": 120,
        // Not niced: this test asserts behaviour, and at nice 19 the emulated job
        // waits behind whatever else the machine runs.
        "cipherbench_nice": 0,
    });
    let t = Instant::now();
    // A fork per host: a fork polls its host's job for the whole job.
    let out = f.ansible("profile.yml", &extra, &["--forks", "4"]);
    let took = t.elapsed();
    let said = text(&out);
    eprintln!("profile.yml on the mixed fleet: {took:.0?}");
    // The host without a build is named with its architecture; the others went on.
    assert!(!out.status.success(), "127.0.0.5 has no build: the play fails: {said}");
    assert!(said.contains("no export from: 127.0.0.5"), "{said}");
    let why = std::fs::read_to_string(results.join("127.0.0.5.failed")).unwrap_or_else(|e| panic!("no 127.0.0.5.failed ({e}): {said}"));
    assert!(
        why.contains("(x86_64)") && why.contains("no cipherbench build for x86_64") && why.contains("is a build for aarch64"),
        "{why}"
    );
    // Which build each host got, as the play says it.
    assert!(said.contains("aarch64: the package cipherbench_"), "{said}");
    assert!(
        said.contains("(package not used: the login user cannot become root"),
        "127.0.0.2 falls back to the package's binary: {said}"
    );
    assert!(
        said.contains("(package not used: cipherbench is already installed (dpkg: installed): left as it is)"),
        "127.0.0.4 keeps its own cipherbench: {said}"
    );
    for (h, arch) in [("127.0.0.2", "x86_64"), ("127.0.0.3", "aarch64"), ("127.0.0.4", "x86_64")] {
        assert_eq!(arch_of(&results, h), arch, "{h}'s export");
    }
    assert_eq!(extracted(), extracted_before, "the binary extracted on the controller is removed");
    // Nothing left: no file under the remote base, no process, no package the play
    // installed; 127.0.0.4's own cipherbench is still there, the same version.
    f.assert_nothing_left();
    for h in [&f.hosts[0], &f.hosts[1], &f.hosts[3]] {
        let now = text(&on_host(&f, h, WHAT_IS_INSTALLED));
        assert!(now.contains("dpkg=none file=no"), "{}: cipherbench after the play: {now}", h.addr);
    }
    let kept = text(&on_host(
        &f,
        &f.hosts[2],
        &format!("{WHAT_IS_INSTALLED}; dpkg-query -W -f='version=${{Version}}\\n' cipherbench"),
    ));
    assert!(
        kept.contains("dpkg=installed file=yes") && kept.contains("version=0.0.1-local"),
        "127.0.0.4's own cipherbench after the play: {kept}"
    );
    // Only the arm64 host became root (install and purge); 127.0.0.2's sudo
    // refused, and 127.0.0.4 was never asked.
    let became = std::fs::read_to_string(f.become_log()).unwrap_or_default();
    assert!(became.lines().any(|l| l.contains(" 127.0.0.3 ")), "{became}");
    assert!(
        became.lines().all(|l| l.contains(" 127.0.0.3 ")),
        "a host other than the arm64 one became root: {became}"
    );

    let (out, report) = fleet_json(&results);
    assert_eq!(out.status.code(), Some(1), "127.0.0.5 is not merged: {}", text(&out));
    assert_eq!(report["hosts_merged"], 3, "{report:#}");
    assert!(report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["host"] == "127.0.0.5" && p["kind"] == "failed"));
    // Three classes: this machine (its OpenSSL and OpenSSH), the arm64 host, and the
    // amd64 Debian 13 host (the same CPU as this machine, Debian 13's libraries).
    assert_eq!(report["classes"].as_array().unwrap().len(), 3, "{report:#}");
    let ids: Vec<&str> = ["127.0.0.2", "127.0.0.3", "127.0.0.4"]
        .iter()
        .map(|h| class_of(&report, h))
        .collect();
    assert!(ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2], "{ids:?}");
    for (id, arch) in ids.iter().zip(["x86_64", "aarch64", "x86_64"]) {
        assert_eq!(class(&report, id)["key"]["arch"], arch, "{report:#}");
        assert!(
            !leaders(&report, id, "tls13_suites").is_empty(),
            "the {arch} class {id} has an answer of its own: {report:#}"
        );
    }
    let deb13 = &class(&report, ids[2])["key"];
    assert_eq!(
        class(&report, ids[1])["key"]["openssl"],
        deb13["openssl"],
        "both chroots are Debian 13"
    );
    assert_eq!(class(&report, ids[0])["key"]["cpu_model"], deb13["cpu_model"], "this machine's CPU");

    eprintln!("mixed fleet test: {:.0?} in all", t0.elapsed());
}

/// Two real exports from the arm64 root under qemu-user (the package's binary,
/// `cipherbench speed` on AES-128-GCM and ChaCha20-Poly1305): one as the emulated
/// CPU is (the aux vector: aes, pmull), one with `--cpu-caps no-aesni`
/// (OPENSSL_armcap without AES and PMULL, a Raspberry Pi 4 class). `cipherbench
/// fleet` keeps them in two aarch64 classes, each with its own answer, and
/// ChaCha20-Poly1305 leads where AES is masked.
#[test]
fn arm64_hosts_with_and_without_aes_are_two_classes_with_their_own_answers() {
    let Some(deb) = arm64_ready("the arm64 classes") else { return };
    let dir = tempfile::Builder::new().prefix("cb-fleet-arm64.").tempdir().unwrap();
    let st = Command::new("dpkg-deb").arg("-x").arg(&deb).arg(dir.path().join("pkg")).status();
    if !st.is_ok_and(|s| s.success()) {
        missing("dpkg-deb -x of the arm64 package failed (dpkg-deb missing?)");
        return;
    }
    std::fs::create_dir_all(dir.path().join("results")).unwrap();
    let speed = "/cb/pkg/usr/bin/cipherbench speed aes-128-gcm chacha20-poly1305 --bytes 16k --budget 3s --no-store --quiet";
    let script = format!(
        "cd /tmp && export HOME=/tmp && {speed} --export-json /cb/results/arm-aes.json >/dev/null && \
         {speed} --cpu-caps no-aesni --export-json /cb/results/arm-no-aes.json >/dev/null && uname -m"
    );
    let t = Instant::now();
    let out = Command::new(repo().join("scripts/pkg-root.sh"))
        .arg("run")
        .arg("/var/cache/cipherbench/debian13-arm64-root")
        .arg("--bind")
        .arg(format!("{}:/cb", dir.path().display()))
        .args(["--", "/bin/sh", "-euc", &script])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "the arm64 runs: {}", text(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "aarch64", "{}", text(&out));
    eprintln!("two arm64 speed runs under qemu: {:.0?}", t.elapsed());
    let results = dir.path().join("results");
    for h in ["arm-aes", "arm-no-aes"] {
        assert_eq!(arch_of(&results, h), "aarch64", "{h}");
    }

    let (out, report) = fleet_json(&results);
    assert!(out.status.success(), "fleet: {}", text(&out));
    assert_eq!(report["hosts_merged"], 2, "{report:#}");
    assert_eq!(report["classes"].as_array().unwrap().len(), 2, "{report:#}");
    let (with, without) = (class_of(&report, "arm-aes"), class_of(&report, "arm-no-aes"));
    assert_ne!(with, without, "{report:#}");
    let flags = |id: &str| -> Vec<String> {
        class(&report, id)["key"]["cpu_flags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap().to_string())
            .collect()
    };
    for f in ["aes", "pmull"] {
        assert!(flags(with).iter().any(|x| x == f), "{f} in {:?}", flags(with));
        assert!(!flags(without).iter().any(|x| x == f), "{f} masked: {:?}", flags(without));
    }
    assert_eq!(class(&report, with)["key"]["arch"], "aarch64");
    assert_eq!(class(&report, without)["key"]["arch"], "aarch64");
    let masked = leaders(&report, without, "tls13_suites");
    assert_eq!(
        masked,
        vec!["TLS_CHACHA20_POLY1305_SHA256"],
        "ChaCha20 leads where AES is masked: {report:#}"
    );
    let plain = leaders(&report, with, "tls13_suites");
    assert!(!plain.is_empty(), "the class with AES has an answer of its own: {report:#}");
    eprintln!("arm64 with AES: {plain:?}; AES masked: {masked:?}");
}

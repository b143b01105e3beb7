//! `cipherbench fleet` and deploy/ansible with the real engine: three inventory
//! hosts (127.0.0.2, .3, .4), each a private sshd with its own host key listening
//! on that address, reached by Ansible (`.venv/bin/ansible-playbook`) over real SSH
//! with a throwaway key. One host hides AES-NI (`--cpu-caps no-aesni`).
//!
//! Budgets (the machine has 2 cores; three hosts run at once):
//! - pass 1 runs the main job (`run`) with a 6 s budget on every host: exports,
//!   classes, cleanup, the fleet config and apply.yml's nginx lines. At that budget
//!   the main job's TLS and SSH figures are single samples (tied) or skipped;
//! - pass 2 (one sshd stopped) runs `cipherbench ssh` on two ciphers with a 12 s
//!   budget, for sshd lines that apply.yml shows and `sshd -t` checks;
//! - pass 3 runs `cipherbench speed` on the AEADs with a 3 s budget: CPU time per
//!   byte, which load does not blur, decides ChaCha20 against AES-GCM per class.

use serde_json::Value;
use std::io::Read;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_cipherbench"))
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn sshd_path() -> Option<PathBuf> {
    ["/usr/sbin/sshd", "/usr/bin/sshd", "/usr/local/sbin/sshd"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn current_user() -> String {
    let out = Command::new("id").arg("-un").output().expect("id -un");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn keygen(path: &Path) {
    let st = Command::new("ssh-keygen")
        .args(["-q", "-N", "", "-t", "ed25519", "-C", "cipherbench-fleet-test", "-f"])
        .arg(path)
        .stdin(Stdio::null())
        .status()
        .expect("ssh-keygen");
    assert!(st.success());
}

/// One inventory host: a private sshd on ADDR with its own host key.
struct HostSshd {
    addr: Ipv4Addr,
    port: u16,
    dir: PathBuf,
    child: Option<Child>,
}

impl HostSshd {
    fn start(sshd: &Path, addr: Ipv4Addr, base: &Path, client_pub: &str) -> HostSshd {
        let dir = base.join(format!("sshd-{addr}"));
        std::fs::create_dir_all(&dir).unwrap();
        keygen(&dir.join("host_ed25519"));
        std::fs::write(dir.join("authorized_keys"), client_pub).unwrap();
        if is_root() {
            let _ = std::fs::create_dir_all("/run/sshd");
        }
        let port = TcpListener::bind((addr, 0))
            .expect("bind the host's address")
            .local_addr()
            .unwrap()
            .port();
        let cfg = format!(
            "ListenAddress {addr}\nPort {port}\nAddressFamily inet\nHostKey {d}/host_ed25519\nPidFile {d}/sshd.pid\n\
AuthorizedKeysFile {d}/authorized_keys\nAllowUsers {user}\n{root}StrictModes no\nUsePAM no\nPubkeyAuthentication yes\n\
PasswordAuthentication no\nKbdInteractiveAuthentication no\nUseDNS no\nPrintMotd no\nX11Forwarding no\nLogLevel ERROR\n\
MaxStartups 100:30:200\nMaxSessions 50\nSubsystem sftp internal-sftp\n",
            d = dir.display(),
            user = current_user(),
            root = if is_root() { "PermitRootLogin prohibit-password\n" } else { "" },
        );
        std::fs::write(dir.join("sshd_config"), cfg).unwrap();
        let log = std::fs::File::create(dir.join("sshd.log")).unwrap();
        let child = Command::new(sshd)
            .args(["-D", "-e", "-f"])
            .arg(dir.join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start sshd");
        let mut h = HostSshd {
            addr,
            port,
            dir,
            child: Some(child),
        };
        h.wait_ready();
        h
    }

    fn wait_ready(&mut self) {
        let t0 = Instant::now();
        let sa = SocketAddr::from((self.addr, self.port));
        loop {
            if let Ok(mut s) = TcpStream::connect_timeout(&sa, Duration::from_millis(200)) {
                s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                let mut b = [0u8; 64];
                if let Ok(n) = s.read(&mut b) {
                    if b[..n].starts_with(b"SSH-2.0-") {
                        return;
                    }
                }
            }
            if let Some(Ok(Some(st))) = self.child.as_mut().map(|c| c.try_wait()) {
                panic!(
                    "sshd on {} exited ({st}): {}",
                    self.addr,
                    std::fs::read_to_string(self.dir.join("sshd.log")).unwrap_or_default()
                );
            }
            assert!(t0.elapsed() < Duration::from_secs(15), "sshd on {} did not answer", self.addr);
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn known_hosts_line(&self) -> String {
        let key = std::fs::read_to_string(self.dir.join("host_ed25519.pub")).unwrap();
        format!("[{}]:{} {}\n", self.addr, self.port, key.trim())
    }

    fn config(&self) -> PathBuf {
        self.dir.join("sshd_config")
    }

    fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for HostSshd {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The test fleet: three hosts, an inventory directory, Ansible's own dirs inside
/// the test's temporary directory.
struct Fleet {
    tmp: tempfile::TempDir,
    hosts: Vec<HostSshd>,
}

impl Fleet {
    /// A client key, one private sshd per address 127.0.0.N, and the inventory.
    fn start(sshd: &Path, hosts: &[u8]) -> Fleet {
        let tmp = tempfile::Builder::new().prefix("cipherbench-fleet-test.").tempdir().unwrap();
        let client = tmp.path().join("client_ed25519");
        keygen(&client);
        let client_pub = std::fs::read_to_string(client.with_extension("pub")).unwrap();
        let hosts: Vec<HostSshd> = hosts
            .iter()
            .map(|n| HostSshd::start(sshd, Ipv4Addr::new(127, 0, 0, *n), tmp.path(), &client_pub))
            .collect();
        let f = Fleet { tmp, hosts };
        f.write_inventory();
        f
    }

    fn inventory_dir(&self) -> PathBuf {
        self.tmp.path().join("inventory")
    }
    fn remote_base(&self) -> PathBuf {
        self.tmp.path().join("remote")
    }

    fn write_inventory(&self) {
        let inv = self.inventory_dir();
        std::fs::create_dir_all(&inv).unwrap();
        let kh: String = self.hosts.iter().map(|h| h.known_hosts_line()).collect();
        let kh_path = self.tmp.path().join("known_hosts");
        std::fs::write(&kh_path, kh).unwrap();
        let mut s = String::from("[fleet]\n");
        for h in &self.hosts {
            let caps = if h.addr == Ipv4Addr::new(127, 0, 0, 4) {
                " cipherbench_cpu_caps=no-aesni"
            } else {
                ""
            };
            s.push_str(&format!(
                "{} ansible_port={} cipherbench_sshd_config={} cipherbench_nginx_conf={}{caps}\n",
                h.addr,
                h.port,
                h.config().display(),
                self.tmp.path().join(format!("nginx-{}.conf", h.addr)).display()
            ));
        }
        s.push_str(&format!(
            "\n[fleet:vars]\nansible_user={}\nansible_ssh_private_key_file={}\n\
ansible_ssh_common_args='-o UserKnownHostsFile={} -o StrictHostKeyChecking=yes -o IdentitiesOnly=yes -o BatchMode=yes -o ConnectTimeout=5'\n\
ansible_python_interpreter=/usr/bin/python3\n",
            current_user(),
            self.tmp.path().join("client_ed25519").display(),
            kh_path.display()
        ));
        std::fs::write(inv.join("hosts"), s).unwrap();
        // A minimal nginx.conf per host, for apply.yml's nginx part.
        for h in &self.hosts {
            let conf = format!(
                "pid {t}/nginx-{a}.pid;\nerror_log {t}/nginx-{a}.err;\nevents {{}}\nhttp {{\n    access_log off;\n}}\n",
                t = self.tmp.path().display(),
                a = h.addr
            );
            std::fs::write(self.tmp.path().join(format!("nginx-{}.conf", h.addr)), conf).unwrap();
        }
    }

    fn ansible(&self, playbook: &str, extra: &Value, args: &[&str]) -> std::process::Output {
        let home = self.tmp.path().join("ansible-home");
        std::fs::create_dir_all(self.remote_base()).unwrap();
        let cfg = self.tmp.path().join("ansible.cfg");
        // No ControlPersist: a stopped sshd must really be unreachable to the next task.
        std::fs::write(
            &cfg,
            "[defaults]\nforks = 3\ntimeout = 10\n[ssh_connection]\npipelining = True\nssh_args = -o ControlMaster=no -o ControlPersist=no\n",
        )
        .unwrap();
        let out = Command::new(repo().join(".venv/bin/ansible-playbook"))
            .arg("-i")
            .arg(self.inventory_dir().join("hosts"))
            .arg(repo().join("deploy/ansible").join(playbook))
            .arg("-e")
            .arg(extra.to_string())
            .args(args)
            .env("ANSIBLE_CONFIG", &cfg)
            .env("ANSIBLE_HOME", &home)
            .env("ANSIBLE_LOCAL_TEMP", home.join("tmp"))
            .env("ANSIBLE_REMOTE_TMP", self.tmp.path().join("ansible-remote-tmp"))
            .env("ANSIBLE_NOCOLOR", "1")
            .env("ANSIBLE_RETRY_FILES_ENABLED", "0")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .output()
            .expect("run ansible-playbook");
        out
    }

    /// The build Ansible copies to each host: the test binary without its debug
    /// sections (a fifth of the size, so each copy is quicker), made once per
    /// fleet; the binary itself where `strip` is missing.
    fn binary(&self) -> PathBuf {
        let stripped = self.tmp.path().join("cipherbench");
        if stripped.exists() {
            return stripped;
        }
        let ok = Command::new("strip")
            .arg("--strip-debug")
            .arg("-o")
            .arg(&stripped)
            .arg(bin())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            stripped
        } else {
            bin()
        }
    }

    fn profile(&self, results: &Path, command: &str, budget: u32, extra_args: &[&str]) -> std::process::Output {
        let extra = serde_json::json!({
            "cipherbench_binary": self.binary(),
            "cipherbench_results": results,
            "cipherbench_command": command,
            "cipherbench_budget_seconds": budget,
            "cipherbench_extra_args": extra_args,
            "cipherbench_remote_base": self.remote_base(),
            "cipherbench_poll_seconds": 1,
            "cipherbench_grace_seconds": 120,
        });
        self.ansible("profile.yml", &extra, &[])
    }

    /// Nothing of ours is left on the hosts: no file under the remote base, no
    /// process running a binary from there.
    fn assert_nothing_left(&self) {
        let base = self.remote_base();
        let left: Vec<_> = std::fs::read_dir(&base).unwrap().filter_map(|e| e.ok()).map(|e| e.path()).collect();
        assert!(left.is_empty(), "files left on the hosts: {left:?}");
        let mut procs = Vec::new();
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            if let Ok(exe) = std::fs::read_link(e.path().join("exe")) {
                if exe.starts_with(&base) {
                    procs.push((e.file_name(), exe));
                }
            }
            if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
                if String::from_utf8_lossy(&cmd).contains(&*base.to_string_lossy()) {
                    procs.push((e.file_name(), PathBuf::from(String::from_utf8_lossy(&cmd).replace('\0', " "))));
                }
            }
        }
        assert!(procs.is_empty(), "processes left on the hosts: {procs:?}");
    }
}

fn venv_ok() -> bool {
    let ok = repo().join(".venv/bin/ansible-playbook").exists();
    if !ok {
        eprintln!("skipped: .venv/bin/ansible-playbook missing; run scripts/ensure-venv.sh (make test does)");
    }
    ok
}

fn fleet(args: &[&Path], more: &[&str]) -> (std::process::Output, Value) {
    let out = Command::new(bin())
        .arg("fleet")
        .args(args)
        .args(["--json", "--no-store"])
        .args(more)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "fleet --json: {e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out, v)
}

fn text(o: &std::process::Output) -> String {
    format!("{}\n{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// The lines apply.yml --diff adds, per file (`+++ after: PATH`).
fn added_lines(diff: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for l in diff.lines() {
        if let Some(p) = l.strip_prefix("+++ after: ") {
            // `+++ after: PATH` (blockinfile may add a note after the path).
            out.push((p.split_whitespace().next().unwrap_or("").to_string(), Vec::new()));
        } else if let Some(a) = l.strip_prefix('+') {
            if let Some(last) = out.last_mut() {
                if !a.starts_with("++") {
                    last.1.push(a.to_string());
                }
            }
        }
    }
    out
}

/// Every option of the fleet-wide choice passes the policy, by `list --policy --json`.
fn assert_fleet_choice_passes(report: &Value, policy: &str) {
    let ssh: Value = serde_json::from_slice(
        &Command::new(bin())
            .args(["list", "ssh", "--policy", policy, "--json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let tls: Value = serde_json::from_slice(
        &Command::new(bin())
            .args(["list", "tls", "--policy", policy, "--json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let choice = report["fleet"]["choice"].as_object().expect("fleet choice");
    assert!(!choice.is_empty(), "the fleet-wide choice is empty: {report:#}");
    for (list, names) in choice {
        for n in names.as_array().unwrap() {
            let n = n.as_str().unwrap();
            let passes = match list.as_str() {
                "ssh_ciphers" | "ssh_macs" | "ssh_kex" | "ssh_hostkeys" => ssh["grades"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|g| g["name"] == n)
                    .map(|g| g["grade"]["passes"] == true),
                "tls13_suites" | "tls12_suites" => tls
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|g| g["suite"]["iana"] == n)
                    .map(|g| g["grade"]["passes"] == true),
                _ => Some(true),
            };
            assert_eq!(passes, Some(true), "{list} {n} in the fleet config does not pass policy {policy}");
        }
    }
}

fn class_of<'a>(report: &'a Value, host: &str) -> &'a str {
    report["host_classes"][host]
        .as_str()
        .unwrap_or_else(|| panic!("{host} not classed: {report:#}"))
}

fn leaders<'a>(report: &'a Value, class: &str, list: &str) -> Vec<&'a str> {
    let c = report["classes"].as_array().unwrap().iter().find(|c| c["id"] == class).unwrap();
    c["answer"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["list"] == list)
        .map(|a| a["leaders"].as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect())
        .unwrap_or_default()
}

#[test]
fn ansible_profiles_three_hosts_merges_two_classes_and_applies_safely() {
    let Some(sshd) = sshd_path() else {
        eprintln!("skipped: no sshd");
        return;
    };
    if !venv_ok() {
        return;
    }
    let mut f = Fleet::start(&sshd, &[2, 3, 4]);

    // Pass 1: the main job on every host.
    let r1 = f.tmp.path().join("results-run");
    let out = f.profile(&r1, "run", 6, &[]);
    assert!(out.status.success(), "profile.yml (run): {}", text(&out));
    let fetched: Vec<_> = std::fs::read_dir(&r1)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    for h in ["127.0.0.2.json", "127.0.0.3.json", "127.0.0.4.json"] {
        assert!(fetched.contains(&h.to_string()), "{h} not fetched: {fetched:?}");
    }
    assert_eq!(fetched.len(), 3, "{fetched:?}");
    f.assert_nothing_left();
    let (out, report) = fleet(&[&r1], &["--ansible-vars", f.inventory_dir().to_str().unwrap()]);
    assert!(out.status.success(), "fleet: {}", text(&out));
    assert_eq!(report["hosts_merged"], 3);
    assert_eq!(report["classes"].as_array().unwrap().len(), 2, "{report:#}");
    assert_eq!(class_of(&report, "127.0.0.2"), class_of(&report, "127.0.0.3"));
    assert_ne!(class_of(&report, "127.0.0.2"), class_of(&report, "127.0.0.4"));
    let masked = report["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == class_of(&report, "127.0.0.4"))
        .unwrap();
    assert!(
        !masked["key"]["cpu_flags"].as_array().unwrap().iter().any(|f| f == "aes"),
        "{masked:#}"
    );
    assert_fleet_choice_passes(&report, "intermediate");
    assert!(f.inventory_dir().join("group_vars/all.yml").exists());
    for h in ["127.0.0.2", "127.0.0.3", "127.0.0.4"] {
        assert!(f.inventory_dir().join(format!("host_vars/{h}.yml")).exists());
    }

    // apply.yml --check --diff with the main job's answer: nginx lines that nginx -t accepts.
    let out = f.ansible("apply.yml", &serde_json::json!({}), &["--check", "--diff"]);
    assert!(out.status.success(), "apply.yml --check: {}", text(&out));
    let diff = String::from_utf8_lossy(&out.stdout).to_string();
    check_added_lines(&f, &diff, false);

    // Pass 2, one host's sshd stopped: two ciphers over real ssh (fixed volume per
    // session so there are several samples), for sshd lines apply.yml can write.
    f.hosts[1].stop();
    let r2 = f.tmp.path().join("results-ssh");
    let out = f.profile(
        &r2,
        "ssh",
        12,
        &[
            "--ciphers",
            "aes128-gcm@openssh.com,chacha20-poly1305@openssh.com",
            "--macs",
            "hmac-sha2-256-etm@openssh.com",
            "--kex",
            "curve25519-sha256",
            "--no-handshakes",
            "--bytes",
            "4M",
        ],
    );
    assert!(!out.status.success(), "an unreachable host makes the play fail: {}", text(&out));
    assert!(text(&out).contains("127.0.0.3"), "{}", text(&out));
    assert!(r2.join("127.0.0.3.unreachable").exists());
    assert!(r2.join("127.0.0.2.json").exists() && r2.join("127.0.0.4.json").exists());
    f.assert_nothing_left();
    let (out, report) = fleet(&[&r2], &["--ansible-vars", f.inventory_dir().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("127.0.0.3 (unreachable)"),
        "{}",
        text(&out)
    );
    assert_eq!(report["hosts_merged"], 2, "{report:#}");
    assert!(report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["host"] == "127.0.0.3" && p["kind"] == "unreachable"));
    assert_ne!(class_of(&report, "127.0.0.2"), class_of(&report, "127.0.0.4"));
    assert_fleet_choice_passes(&report, "intermediate");
    let out = f.ansible(
        "apply.yml",
        &serde_json::json!({"cipherbench_hosts": "127.0.0.2,127.0.0.4"}),
        &["--check", "--diff"],
    );
    assert!(out.status.success(), "apply.yml --check: {}", text(&out));
    check_added_lines(&f, &String::from_utf8_lossy(&out.stdout), true);
    // Check mode changed nothing.
    for h in &f.hosts {
        let c = std::fs::read_to_string(h.config()).unwrap();
        assert!(!c.contains("cipherbench fleet"), "--check wrote {}", h.config().display());
    }

    // Lock-out guard: a HostKeyAlgorithms line naming only algorithms this sshd has
    // no key for (127.0.0.4 has an Ed25519 key only) is left out, never applied.
    let hv = f.inventory_dir().join("host_vars/127.0.0.4.yml");
    let y: String = std::fs::read_to_string(&hv)
        .unwrap()
        .lines()
        .filter(|l| !l.contains("HostKeyAlgorithms"))
        .map(|l| format!("{l}\n"))
        .collect();
    let y = y.replacen(
        "cipherbench_class_sshd_lines:\n",
        "cipherbench_class_sshd_lines:\n  - \"HostKeyAlgorithms rsa-sha2-512,rsa-sha2-256\"\n",
        1,
    );
    std::fs::write(&hv, y).unwrap();
    let out = f.ansible(
        "apply.yml",
        &serde_json::json!({"cipherbench_hosts": "127.0.0.4"}),
        &["--check", "--diff"],
    );
    assert!(out.status.success(), "apply.yml --check: {}", text(&out));
    let diff = String::from_utf8_lossy(&out.stdout).to_string();
    let added = added_lines(&diff);
    let sshd_added = added
        .iter()
        .find(|(p, _)| p.contains("sshd-127.0.0.4"))
        .map(|(_, l)| l.clone())
        .unwrap_or_default();
    assert!(sshd_added.iter().any(|l| l.starts_with("Ciphers ")), "{diff}");
    assert!(
        !sshd_added.iter().any(|l| l.contains("HostKeyAlgorithms")),
        "a line that would leave sshd without a usable host key: {diff}"
    );

    // For real on 127.0.0.2: validated, backed up, reloaded; sshd still lets
    // Ansible in (host key checked), and a second run changes nothing.
    let pid = std::fs::read_to_string(f.hosts[0].dir.join("sshd.pid")).unwrap().trim().to_string();
    let real = serde_json::json!({
        "cipherbench_hosts": "127.0.0.2",
        "cipherbench_sshd_reload_command": format!("kill -HUP {pid}"),
        "cipherbench_nginx_reload_command": "true",
    });
    let out = f.ansible("apply.yml", &real, &[]);
    assert!(out.status.success(), "apply.yml: {}", text(&out));
    let conf = std::fs::read_to_string(f.hosts[0].config()).unwrap();
    assert!(conf.starts_with("# BEGIN cipherbench fleet (class)\n"), "{conf}");
    assert!(conf.contains("\nCiphers "), "{conf}");
    let backups = std::fs::read_dir(&f.hosts[0].dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("sshd_config.") && e.file_name().to_string_lossy().ends_with('~'))
        .count();
    assert_eq!(backups, 1, "one backup of sshd_config");
    let st = Command::new(sshd_path().unwrap())
        .arg("-t")
        .arg("-f")
        .arg(f.hosts[0].config())
        .output()
        .unwrap();
    assert!(st.status.success(), "{}", text(&st));
    f.hosts[0].wait_ready();
    let out = f.ansible("apply.yml", &real, &[]);
    assert!(out.status.success(), "second apply.yml: {}", text(&out));
    let recap = String::from_utf8_lossy(&out.stdout);
    assert!(
        recap
            .lines()
            .any(|l| l.starts_with("127.0.0.2") && l.contains("changed=0") && l.contains("unreachable=0")),
        "the second run changes nothing: {recap}"
    );

    // Pass 3: the AEAD primitives (CPU time per byte, so a loaded machine does not
    // blur them): ChaCha20 leads where AES-NI is hidden, AES-GCM elsewhere.
    let r3 = f.tmp.path().join("results-speed");
    let out = f.profile(
        &r3,
        "speed",
        3,
        &["aes-128-gcm", "aes-256-gcm", "chacha20-poly1305", "--bytes", "16k"],
    );
    assert!(!out.status.success(), "127.0.0.3 is still down: {}", text(&out));
    f.assert_nothing_left();
    let (_, report) = fleet(&[&r3], &[]);
    assert_eq!(report["hosts_merged"], 2, "{report:#}");
    let plain = leaders(&report, class_of(&report, "127.0.0.2"), "tls13_suites");
    let hidden = leaders(&report, class_of(&report, "127.0.0.4"), "tls13_suites");
    assert_eq!(
        hidden,
        vec!["TLS_CHACHA20_POLY1305_SHA256"],
        "ChaCha20 leads where AES-NI is hidden: {report:#}"
    );
    assert!(
        plain.iter().any(|s| s.contains("AES")),
        "AES-GCM leads (or ties) with AES-NI: {plain:?}"
    );
    assert_ne!(plain, hidden, "the two classes get different answers");
    // The fleet-wide choice maximises the worst class: the AES-NI-less class gives up nothing.
    let gives: Vec<&Value> = report["fleet"]["gives_up"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["list"] == "tls13_suites")
        .collect();
    assert_eq!(
        report["fleet"]["choice"]["tls13_suites"][0], "TLS_CHACHA20_POLY1305_SHA256",
        "{report:#}"
    );
    assert!(
        gives
            .iter()
            .any(|g| g["class"] == class_of(&report, "127.0.0.4") && g["tied"] == true),
        "{gives:?}"
    );
}

/// Puts the lines the diff adds into a copy of each file and runs the software's
/// own parser on it.
fn check_added_lines(f: &Fleet, diff: &str, want_sshd: bool) {
    let added = added_lines(diff);
    let mut sshd_seen = false;
    let mut nginx_seen = false;
    for (path, lines) in &added {
        let body: Vec<&String> = lines.iter().filter(|l| !l.trim_start().starts_with('#')).collect();
        if body.is_empty() {
            continue;
        }
        if path.contains("sshd") {
            sshd_seen = true;
            assert!(body.iter().any(|l| l.starts_with("Ciphers ")), "{lines:?}");
            let orig = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}\n{diff}"));
            let test = f.tmp.path().join("sshd_test_config");
            std::fs::write(&test, format!("{}\n{orig}", lines.join("\n"))).unwrap();
            let out = Command::new(sshd_path().unwrap()).arg("-t").arg("-f").arg(&test).output().unwrap();
            assert!(out.status.success(), "sshd -t refuses {lines:?}: {}", text(&out));
        } else if path.contains("nginx") {
            nginx_seen = true;
            assert!(body.iter().any(|l| l.contains("ssl_")), "{lines:?}");
            let orig = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}\n{diff}"));
            let test = f.tmp.path().join("nginx_test.conf");
            std::fs::write(&test, orig.replacen("http {\n", &format!("http {{\n{}\n", lines.join("\n")), 1)).unwrap();
            if let Some(nginx) = ["/usr/sbin/nginx", "/usr/bin/nginx"].iter().find(|p| Path::new(p).exists()) {
                let out = Command::new(nginx).arg("-t").arg("-c").arg(&test).output().unwrap();
                assert!(out.status.success(), "nginx -t refuses {lines:?}: {}", text(&out));
            }
        }
    }
    assert!(nginx_seen || sshd_seen, "apply.yml --diff showed no lines: {diff}");
    if want_sshd {
        assert!(sshd_seen, "no sshd lines in the diff: {diff}");
    }
}

/// When no host can be reached, Ansible would end the playbook at the first
/// play where every host is gone: each host must still be named in results/ and
/// the playbook must still fail, and `fleet` says nothing could be merged.
#[test]
fn every_host_unreachable_is_still_named_and_the_play_fails() {
    let Some(sshd) = sshd_path() else {
        eprintln!("skipped: no sshd");
        return;
    };
    if !venv_ok() {
        return;
    }
    let mut f = Fleet::start(&sshd, &[5, 6]);
    for h in f.hosts.iter_mut() {
        h.stop();
    }
    let results = f.tmp.path().join("results-none");
    let out = f.profile(&results, "run", 6, &[]);
    assert!(!out.status.success(), "no host answered, yet the play passed: {}", text(&out));
    for h in ["127.0.0.5", "127.0.0.6"] {
        let marker = results.join(format!("{h}.unreachable"));
        let why = std::fs::read_to_string(&marker).unwrap_or_else(|e| panic!("{} missing ({e}): {}", marker.display(), text(&out)));
        assert!(why.starts_with(&format!("{h}: unreachable")), "{why}");
    }
    assert!(text(&out).contains("no export from: 127.0.0.5, 127.0.0.6"), "{}", text(&out));
    f.assert_nothing_left();
    let (out, report) = fleet(&[&results], &[]);
    assert_eq!(out.status.code(), Some(2), "nothing merged: {}", text(&out));
    assert_eq!(report["hosts_merged"], 0, "{report:#}");
}

/// A truncated export, another program's JSON and another schema: each named, the
/// rest merged (exit 1).
#[test]
fn truncated_and_foreign_files_are_named_and_the_rest_merged() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("a.json");
    let st = Command::new(bin())
        .args([
            "speed",
            "aes-128-gcm",
            "chacha20-poly1305",
            "--bytes",
            "16k",
            "--budget",
            "1s",
            "--no-store",
            "--quiet",
            "--export-json",
        ])
        .arg(&export)
        .status()
        .unwrap();
    assert!(st.success());
    let text_a = std::fs::read_to_string(&export).unwrap();
    // b's run saw an installed sshd offering hmac-sha1 (the installed diff rides
    // along in the run's settings).
    let mut b: Value = serde_json::from_str(&text_a).unwrap();
    b["run"]["settings"]["installed_diff"] = serde_json::json!([{"software": "sshd", "offered": [
        {"list": "ssh_macs", "name": "hmac-sha1", "level": "weak", "allowed": false},
        {"list": "ssh_macs", "name": "hmac-sha2-256-etm@openssh.com", "level": "recommended", "allowed": true}]}]);
    std::fs::write(dir.path().join("b.json"), serde_json::to_vec_pretty(&b).unwrap()).unwrap();
    std::fs::write(dir.path().join("cut.json"), &text_a[..text_a.len() / 2]).unwrap();
    std::fs::write(dir.path().join("other.json"), r#"{"name": "something else", "items": [1, 2]}"#).unwrap();
    std::fs::write(dir.path().join("future.json"), text_a.replacen("cipherbench/1", "cipherbench/9", 1)).unwrap();
    let (out, report) = fleet(&[dir.path()], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(report["hosts_merged"], 2, "{report:#}");
    let problems = report["problems"].as_array().unwrap();
    let kind = |file: &str| {
        problems
            .iter()
            .find(|p| p["file"].as_str().unwrap().ends_with(file))
            .map(|p| (p["kind"].as_str().unwrap().to_string(), p["error"].as_str().unwrap().to_string()))
            .unwrap_or_else(|| panic!("{file} not named: {problems:?}"))
    };
    let f = report["findings"].as_array().unwrap();
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(
        (f[0]["hosts"].as_u64(), f[0]["software"].as_str(), f[0]["name"].as_str()),
        (Some(1), Some("sshd"), Some("hmac-sha1"))
    );
    let (k, e) = kind("cut.json");
    assert_eq!(k, "truncated");
    assert!(e.contains("cut.json") && e.contains("truncated"), "{e}");
    let (k, e) = kind("other.json");
    assert_eq!(k, "foreign");
    assert!(e.contains("other.json") && e.contains("not a cipherbench export"), "{e}");
    let (k, e) = kind("future.json");
    assert_eq!(k, "schema");
    assert!(e.contains("cipherbench/9") && e.contains("cipherbench/1"), "{e}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    for name in ["cut", "other", "future"] {
        assert!(stderr.contains(name), "{stderr}");
    }
    // Markdown, HTML and the Ansible vars come from the same report; only merged
    // hosts get host_vars.
    let md = dir.path().join("fleet.md");
    let html = dir.path().join("fleet.html");
    let vars = dir.path().join("inv");
    let out = Command::new(bin())
        .arg("fleet")
        .arg(dir.path())
        .arg("--quiet")
        .arg("--export-markdown")
        .arg(&md)
        .arg("--export-html")
        .arg(&html)
        .arg("--ansible-vars")
        .arg(&vars)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains("class-1") && md.contains("cut.json"), "{md}");
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(html.contains("<table") && html.contains("class-1"), "{html}");
    let mut hv: Vec<String> = std::fs::read_dir(vars.join("host_vars"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    hv.sort();
    assert_eq!(hv, ["a.yml", "b.yml"]);
    let a = std::fs::read_to_string(vars.join("host_vars/a.yml")).unwrap();
    assert!(
        a.contains("cipherbench_class: \"class-1\"") && a.contains("cipherbench_class_nginx_lines:\n  - \"ssl_"),
        "{a}"
    );
    assert!(std::fs::read_to_string(vars.join("group_vars/all.yml"))
        .unwrap()
        .contains("cipherbench_fleet_nginx_lines:"));
    // The terminal view names them too.
    let out = Command::new(bin())
        .arg("fleet")
        .arg(dir.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(
        t.contains("cut.json: truncated") && t.contains("other.json: not a cipherbench export"),
        "{t}"
    );
    // Nothing mergeable at all is bad input (exit 2).
    let (out, _) = fleet(&[&dir.path().join("cut.json")], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

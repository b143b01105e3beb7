//! The test fleet shared by `tests/fleet.rs` (profile.yml, `cipherbench fleet`)
//! and `tests/apply.rs` (apply.yml): inventory hosts on 127.0.0.N, each a private
//! sshd with its own host key listening on that address, reached by Ansible
//! (`.venv/bin/ansible-playbook`) over real SSH with a throwaway key.
//!
//! `become` goes through a stand-in for sudo (`ansible_become_exe`) that runs the
//! command as the same user and logs it, so the tests see which runs become root
//! and need no sudo on the machine.
//!
//! Included with `#[path = "common/fleet.rs"] mod hosts;`: each test crate uses
//! its own part.
#![allow(dead_code)]

use serde_json::Value;
use std::io::Read;
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_cipherbench"))
}

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn sshd_path() -> Option<PathBuf> {
    ["/usr/sbin/sshd", "/usr/bin/sshd", "/usr/local/sbin/sshd"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

pub fn nginx_path() -> Option<PathBuf> {
    ["/usr/sbin/nginx", "/usr/bin/nginx"].iter().map(PathBuf::from).find(|p| p.exists())
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

pub fn current_user() -> String {
    let out = Command::new("id").arg("-un").output().expect("id -un");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

pub fn keygen(path: &Path) {
    let st = Command::new("ssh-keygen")
        .args(["-q", "-N", "", "-t", "ed25519", "-C", "cipherbench-fleet-test", "-f"])
        .arg(path)
        .stdin(Stdio::null())
        .status()
        .expect("ssh-keygen");
    assert!(st.success());
}

/// Whether `.venv/bin/ansible-playbook` is there; under `CI=true` its absence fails
/// the test (`make test` installs it), elsewhere the test says why it skips.
pub fn venv_ok() -> bool {
    let ok = repo().join(".venv/bin/ansible-playbook").exists();
    if !ok {
        missing(".venv/bin/ansible-playbook missing; run scripts/ensure-venv.sh (make test does)");
    }
    ok
}

/// A tool the test needs is not installed: under `CI=true` the test fails (`make
/// test` installs sshd, nginx and the venv), elsewhere it says why it skipped.
pub fn missing(why: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{why}, under CI=true");
    }
    eprintln!("skipped: {why}");
}

pub fn text(o: &std::process::Output) -> String {
    format!("{}\n{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// The lines apply.yml --diff adds, per file (`+++ after: PATH`).
pub fn added_lines(diff: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for l in diff.lines() {
        if let Some(p) = l.strip_prefix("+++ after: ") {
            // `+++ after: PATH` (a module may add a note after the path).
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

/// One inventory host: a private sshd on ADDR with its own host key.
pub struct HostSshd {
    pub addr: Ipv4Addr,
    pub port: u16,
    pub dir: PathBuf,
    /// The config file sshd reads (its own, or a copy of a stock one).
    config: PathBuf,
    child: Option<Child>,
}

impl HostSshd {
    /// A private sshd with a config of its own.
    pub fn start(sshd: &Path, addr: Ipv4Addr, base: &Path, client_pub: &str) -> HostSshd {
        Self::start_under(&[], sshd, addr, base, client_pub)
    }

    /// [`HostSshd::start`], sshd started as the last argument of `prefix` (a
    /// command that execs it, e.g. `scripts/fleet-arm64-host.sh serve ... --`, whose
    /// sessions run chrooted in an arm64 root).
    pub fn start_under(prefix: &[String], sshd: &Path, addr: Ipv4Addr, base: &Path, client_pub: &str) -> HostSshd {
        let dir = Self::prepare(addr, base, client_pub);
        let config = dir.join("sshd_config");
        let d = dir.display().to_string();
        let cfg = move |port: u16| {
            format!(
                "ListenAddress {addr}\nPort {port}\nAddressFamily inet\nHostKey {d}/host_ed25519\nPidFile {d}/sshd.pid\n\
AuthorizedKeysFile {d}/authorized_keys\nAllowUsers {user}\n{root}StrictModes no\nUsePAM no\nPubkeyAuthentication yes\n\
PasswordAuthentication no\nKbdInteractiveAuthentication no\nUseDNS no\nPrintMotd no\nX11Forwarding no\nLogLevel ERROR\n\
MaxStartups 100:30:200\nMaxSessions 50\nSubsystem sftp internal-sftp\n",
                user = current_user(),
                root = if is_root() { "PermitRootLogin prohibit-password\n" } else { "" },
            )
        };
        Self::spawn_under(prefix, sshd, addr, dir, config.clone(), |port| {
            std::fs::write(&config, cfg(port)).unwrap();
            Vec::new()
        })
    }

    /// An sshd reading `config` (a copy of a distribution's stock sshd_config, its
    /// Include pointed at a private directory), with only what a private sshd
    /// needs given as `-o` (which sshd reads before the file): where it listens,
    /// its host key, pid file and authorized key, no PAM.
    pub fn start_from(sshd: &Path, addr: Ipv4Addr, base: &Path, client_pub: &str, config: &Path) -> HostSshd {
        let dir = Self::prepare(addr, base, client_pub);
        let d = dir.display().to_string();
        let mut o = vec![
            format!("ListenAddress={addr}"),
            "AddressFamily=inet".into(),
            format!("HostKey={d}/host_ed25519"),
            format!("PidFile={d}/sshd.pid"),
            format!("AuthorizedKeysFile={d}/authorized_keys"),
            format!("AllowUsers={}", current_user()),
            "StrictModes=no".into(),
            "UsePAM=no".into(),
            "UseDNS=no".into(),
            "LogLevel=ERROR".into(),
            "MaxStartups=100:30:200".into(),
        ];
        if is_root() {
            o.push("PermitRootLogin=prohibit-password".into());
        }
        Self::spawn(sshd, addr, dir, config.to_path_buf(), |port| {
            let mut args = vec!["-o".to_string(), format!("Port={port}")];
            for x in &o {
                args.push("-o".to_string());
                args.push(x.clone());
            }
            args
        })
    }

    fn prepare(addr: Ipv4Addr, base: &Path, client_pub: &str) -> PathBuf {
        let dir = base.join(format!("sshd-{addr}"));
        std::fs::create_dir_all(&dir).unwrap();
        keygen(&dir.join("host_ed25519"));
        std::fs::write(dir.join("authorized_keys"), client_pub).unwrap();
        if is_root() {
            let _ = std::fs::create_dir_all("/run/sshd");
        }
        dir
    }

    /// Starts sshd on a port of its own (`args(port)`: its `-o` options, after
    /// `-f config`; tried again on another port while it is taken), and waits for
    /// its banner.
    fn spawn(sshd: &Path, addr: Ipv4Addr, dir: PathBuf, config: PathBuf, args: impl FnMut(u16) -> Vec<String>) -> HostSshd {
        Self::spawn_under(&[], sshd, addr, dir, config, args)
    }

    fn spawn_under(
        prefix: &[String],
        sshd: &Path,
        addr: Ipv4Addr,
        dir: PathBuf,
        config: PathBuf,
        mut args: impl FnMut(u16) -> Vec<String>,
    ) -> HostSshd {
        let (port, child) = crate::ports::start(&format!("sshd on {addr}"), &dir.join("sshd.log"), |port| {
            let mut c = match prefix.split_first() {
                Some((first, rest)) => {
                    let mut c = Command::new(first);
                    c.args(rest).arg(sshd);
                    c
                }
                None => Command::new(sshd),
            };
            c.args(["-D", "-e", "-f"]).arg(&config).args(args(port));
            c
        });
        let mut h = HostSshd {
            addr,
            port,
            dir,
            config,
            child: Some(child),
        };
        h.wait_ready();
        h
    }

    pub fn wait_ready(&mut self) {
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

    pub fn known_hosts_line(&self) -> String {
        let key = std::fs::read_to_string(self.dir.join("host_ed25519.pub")).unwrap();
        format!("[{}]:{} {}\n", self.addr, self.port, key.trim())
    }

    pub fn config(&self) -> PathBuf {
        self.config.clone()
    }

    /// `kill -HUP PID`: how apply.yml reloads this sshd (it re-executes itself and
    /// reads its config again).
    pub fn reload_command(&self) -> String {
        format!("kill -HUP {}", self.child.as_ref().expect("sshd runs").id())
    }

    pub fn stop(&mut self) {
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

/// The test fleet: hosts, an inventory directory, Ansible's own dirs inside the
/// test's temporary directory.
pub struct Fleet {
    pub tmp: tempfile::TempDir,
    pub hosts: Vec<HostSshd>,
}

impl Fleet {
    /// A client key, one private sshd per address 127.0.0.N, and the inventory.
    pub fn start(sshd: &Path, hosts: &[u8]) -> Fleet {
        let f = Fleet::empty();
        let client_pub = f.client_pub();
        let hosts = hosts
            .iter()
            .map(|n| HostSshd::start(sshd, Ipv4Addr::new(127, 0, 0, *n), f.tmp.path(), &client_pub))
            .collect();
        let f = Fleet { hosts, ..f };
        f.write_inventory();
        f
    }

    /// The temporary directory and the client key, no host yet.
    pub fn empty() -> Fleet {
        let tmp = tempfile::Builder::new().prefix("cipherbench-fleet-test.").tempdir().unwrap();
        keygen(&tmp.path().join("client_ed25519"));
        Fleet { tmp, hosts: Vec::new() }
    }

    pub fn client_pub(&self) -> String {
        std::fs::read_to_string(self.tmp.path().join("client_ed25519.pub")).unwrap()
    }

    pub fn client_key(&self) -> PathBuf {
        self.tmp.path().join("client_ed25519")
    }

    pub fn inventory_dir(&self) -> PathBuf {
        self.tmp.path().join("inventory")
    }
    pub fn remote_base(&self) -> PathBuf {
        self.tmp.path().join("remote")
    }
    pub fn known_hosts(&self) -> PathBuf {
        self.tmp.path().join("known_hosts")
    }
    /// Every command run through `become`, one per line.
    pub fn become_log(&self) -> PathBuf {
        self.tmp.path().join("become.log")
    }

    /// The inventory: each host with its port, the private sshd and nginx config
    /// paths apply.yml edits, and one host (127.0.0.4) hiding AES-NI.
    pub fn write_inventory(&self) {
        self.write_inventory_with(|h| {
            let caps = if h.addr == Ipv4Addr::new(127, 0, 0, 4) {
                " cipherbench_cpu_caps=no-aesni"
            } else {
                ""
            };
            format!(
                "cipherbench_sshd_config={} cipherbench_nginx_conf={}{caps}",
                h.config().display(),
                self.tmp.path().join(format!("nginx-{}.conf", h.addr)).display()
            )
        });
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

    /// The inventory with `vars(host)` on each host's line. Each line of the become
    /// log starts with the session's `[$SSH_CONNECTION]` (the host's address in it).
    pub fn write_inventory_with(&self, vars: impl Fn(&HostSshd) -> String) {
        let inv = self.inventory_dir();
        std::fs::create_dir_all(&inv).unwrap();
        let kh: String = self.hosts.iter().map(|h| h.known_hosts_line()).collect();
        std::fs::write(self.known_hosts(), kh).unwrap();
        let sudo = self.tmp.path().join("fake-sudo");
        std::fs::write(
            &sudo,
            format!(
                "#!/bin/sh\n# sudo's options as Ansible passes them, then the command: run it as we are, and log it.\n\
echo \"[$SSH_CONNECTION] $*\" >> '{}'\nwhile [ $# -gt 0 ]; do case \"$1\" in -u|-p) shift 2 ;; -*) shift ;; *) break ;; esac; done\nexec \"$@\"\n",
                self.become_log().display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&sudo, std::fs::Permissions::from_mode(0o755)).unwrap();
        // apply.yml makes its confirmation directory under /run as root; the
        // stand-in for sudo does not make a non-root run root, so there it gets a
        // private base of its own (owned by the user, 0700: apply.yml accepts it).
        let confirm_base = if is_root() {
            String::new()
        } else {
            let base = self.tmp.path().join("confirm-base");
            std::fs::create_dir_all(&base).unwrap();
            std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o700)).unwrap();
            format!("cipherbench_confirm_base={}\n", base.display())
        };
        let mut s = String::from("[fleet]\n");
        for h in &self.hosts {
            s.push_str(&format!("{} ansible_port={} {}\n", h.addr, h.port, vars(h)));
        }
        s.push_str(&format!(
            "\n[fleet:vars]\nansible_user={}\nansible_ssh_private_key_file={}\n\
ansible_ssh_common_args='-o UserKnownHostsFile={} -o StrictHostKeyChecking=yes -o IdentitiesOnly=yes -o BatchMode=yes -o ConnectTimeout=20'\n\
ansible_python_interpreter=/usr/bin/python3\nansible_become_exe={}\n{confirm_base}",
            current_user(),
            self.client_key().display(),
            self.known_hosts().display(),
            sudo.display()
        ));
        std::fs::write(inv.join("hosts"), s).unwrap();
    }

    pub fn ansible(&self, playbook: &str, extra: &Value, args: &[&str]) -> std::process::Output {
        let home = self.tmp.path().join("ansible-home");
        std::fs::create_dir_all(self.remote_base()).unwrap();
        let cfg = self.tmp.path().join("ansible.cfg");
        // No ControlPersist: a stopped sshd must really be unreachable to the next
        // task, and a broken one must not hide behind a master connection.
        // become_allow_same_user: run as root, become root still goes through the
        // logging stand-in for sudo.
        std::fs::write(
            &cfg,
            "[defaults]\nforks = 3\ntimeout = 30\n[privilege_escalation]\nbecome_allow_same_user = True\n\
[ssh_connection]\npipelining = True\nssh_args = -o ControlMaster=no -o ControlPersist=no\n",
        )
        .unwrap();
        Command::new(repo().join(".venv/bin/ansible-playbook"))
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
            .expect("run ansible-playbook")
    }

    /// The build Ansible copies to each host: the test binary without its debug
    /// sections and symbol table (a fifth of the size, so each copy is quicker),
    /// made once per fleet; the binary itself where `strip` is missing.
    pub fn binary(&self) -> PathBuf {
        let stripped = self.tmp.path().join("cipherbench");
        if stripped.exists() {
            return stripped;
        }
        let ok = Command::new("strip")
            .arg("--strip-all")
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

    pub fn profile(&self, results: &Path, command: &str, budget: u32, extra_args: &[&str]) -> std::process::Output {
        self.profile_with(results, command, budget, extra_args, serde_json::json!({}))
    }

    /// [`Fleet::profile`] with more extra vars.
    pub fn profile_with(&self, results: &Path, command: &str, budget: u32, extra_args: &[&str], more: Value) -> std::process::Output {
        let mut extra = serde_json::json!({
            "cipherbench_binary": self.binary(),
            "cipherbench_results": results,
            "cipherbench_command": command,
            "cipherbench_budget_seconds": budget,
            "cipherbench_extra_args": extra_args,
            "cipherbench_remote_base": self.remote_base(),
            "cipherbench_poll_seconds": 1,
            "cipherbench_grace_seconds": 120,
        });
        for (k, v) in more.as_object().into_iter().flatten() {
            extra[k] = v.clone();
        }
        self.ansible("profile.yml", &extra, &[])
    }

    /// A new SSH login to `h` as a user would make it: a fresh connection (no
    /// multiplexing), the controller's default client algorithms.
    pub fn login(&self, h: &HostSshd) -> std::process::Output {
        Command::new("ssh")
            .args(["-o", "ControlMaster=no", "-o", "ControlPath=none", "-o", "BatchMode=yes"])
            .args([
                "-o",
                "IdentitiesOnly=yes",
                "-o",
                "StrictHostKeyChecking=yes",
                "-o",
                "ConnectTimeout=20",
            ])
            .arg("-o")
            .arg(format!("UserKnownHostsFile={}", self.known_hosts().display()))
            .arg("-i")
            .arg(self.client_key())
            .arg("-p")
            .arg(h.port.to_string())
            .arg("-l")
            .arg(current_user())
            .arg(h.addr.to_string())
            .arg("true")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// Nothing of ours is left on the hosts: no file under the remote base, no
    /// process running a binary from there.
    pub fn assert_nothing_left(&self) {
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

/// The class `host` is in, by the fleet report's `host_classes`.
pub fn class_of<'a>(report: &'a Value, host: &str) -> &'a str {
    report["host_classes"][host]
        .as_str()
        .unwrap_or_else(|| panic!("{host} not classed: {report:#}"))
}

/// The fleet report's class `id`.
pub fn class<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["classes"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap()
}

/// The leaders of class `id`'s answer for `list` (`tls13_suites` …).
pub fn leaders<'a>(report: &'a Value, id: &str, list: &str) -> Vec<&'a str> {
    class(report, id)["answer"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["list"] == list)
        .map(|a| a["leaders"].as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect())
        .unwrap_or_default()
}

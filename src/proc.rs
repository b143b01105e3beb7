//! The one reader of /proc/PID: a process's stat line (state, parent, CPU ticks,
//! start time), its command line, its scheduler time and its cgroup, and the list
//! of processes. Linux only, like the rest of cipherbench.
//!
//! Why one parser: /proc/PID/stat is `pid (comm) state ppid …`, and `comm` is
//! whatever the process named itself (up to 15 bytes): it may hold spaces, `(`
//! and `)`. The fields after it are only found after the *last* `)`; a reader
//! that splits at spaces, or at the first `)`, reads another process's numbers.

/// The fields of /proc/PID/stat that cipherbench uses (stat(5); times in clock
/// ticks, see [`ticks_per_second`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    pub pid: u32,
    /// The command name as the kernel keeps it (field 2, without its parentheses).
    pub comm: String,
    /// Field 3: `R`, `S`, `D`, `Z` (zombie), `X` (dead), …
    pub state: char,
    /// Field 4.
    pub ppid: u32,
    /// Fields 14 and 15: CPU time the process itself has spent.
    pub utime: u64,
    pub stime: u64,
    /// Fields 16 and 17: CPU time of the children it has reaped.
    pub cutime: u64,
    pub cstime: u64,
    /// Field 22: when it started, in clock ticks since boot.
    pub starttime: u64,
}

impl Stat {
    /// Parses one /proc/PID/stat line; `None` when it is not one (truncated,
    /// no parenthesised command, a field that is not a number).
    pub fn parse(line: &str) -> Option<Stat> {
        let open = line.find('(')?;
        let close = line.rfind(')')?;
        if close < open {
            return None;
        }
        let pid = line[..open].trim().parse().ok()?;
        let comm = line[open + 1..close].to_string();
        // Field 3 onwards; `f[i]` is field i + 3.
        let f: Vec<&str> = line[close + 1..].split_whitespace().collect();
        let num = |field: usize| -> Option<u64> { f.get(field - 3)?.parse().ok() };
        let mut state = f.first()?.chars();
        let (Some(s), None) = (state.next(), state.next()) else {
            return None;
        };
        Some(Stat {
            pid,
            comm,
            state: s,
            ppid: u32::try_from(num(4)?).ok()?,
            utime: num(14)?,
            stime: num(15)?,
            cutime: num(16)?,
            cstime: num(17)?,
            starttime: num(22)?,
        })
    }

    /// The stat of process `pid`, `None` when it is gone (or unreadable).
    pub fn read(pid: u32) -> Option<Stat> {
        Stat::parse(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
    }

    /// Its own CPU time, user + system (clock ticks).
    pub fn own_ticks(&self) -> u64 {
        self.utime + self.stime
    }

    /// The CPU time of the children it has reaped, user + system (clock ticks).
    pub fn reaped_ticks(&self) -> u64 {
        self.cutime + self.cstime
    }

    /// Neither a zombie nor dead.
    pub fn running(&self) -> bool {
        self.state != 'Z' && self.state != 'X'
    }
}

/// Clock ticks per second (`sysconf(_SC_CLK_TCK)`, at least 1).
pub fn ticks_per_second() -> f64 {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64
}

/// Every process id listed in /proc now.
pub fn pids() -> Vec<u32> {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.flatten().filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok()).collect()
}

/// The raw command line of `pid` (arguments separated by NUL bytes; daemons
/// rewrite it into a title).
pub fn cmdline(pid: u32) -> Option<Vec<u8>> {
    std::fs::read(format!("/proc/{pid}/cmdline")).ok()
}

/// CPU time `pid` has run, in nanoseconds, from /proc/PID/schedstat (first
/// field); `None` on kernels without schedstats.
pub fn schedstat_ns(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/schedstat")).ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// The cgroup v2 path of `pid` (the `0::` line of /proc/PID/cgroup).
pub fn cgroup_v2(pid: u32) -> Option<String> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    s.lines().find_map(|l| l.strip_prefix("0::")).map(|p| p.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stat line of `comm` with known numbers: ppid 1, utime 11, stime 12,
    /// cutime 13, cstime 14, starttime 4242.
    fn line(comm: &str) -> String {
        format!("4321 ({comm}) S 1 4321 4321 0 -1 4194560 100 0 0 0 11 12 13 14 20 0 1 0 4242 1000 10 18446744073709551615")
    }

    #[test]
    fn hostile_command_names_do_not_shift_the_fields() {
        for comm in [
            "sshd",
            "sshd: root [priv]",
            "a) R 99 9 9",
            ") Z 7 (",
            "((((",
            "))))",
            "x) S 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 (y",
            "",
            " ",
            "tab\there",
        ] {
            let s = Stat::parse(&line(comm)).unwrap_or_else(|| panic!("{comm:?}"));
            assert_eq!((s.pid, s.comm.as_str(), s.state, s.ppid), (4321, comm, 'S', 1), "{comm:?}");
            assert_eq!((s.own_ticks(), s.reaped_ticks(), s.starttime), (23, 27, 4242), "{comm:?}");
            assert!(s.running());
        }
    }

    #[test]
    fn what_is_not_a_stat_line_is_refused() {
        assert_eq!(Stat::parse(""), None);
        assert_eq!(Stat::parse("4321 sshd S 1"), None);
        // Cut off right after the command, or before the start time.
        assert_eq!(Stat::parse("4321 (sshd)"), None);
        assert_eq!(Stat::parse("4321 (sshd) S 1 4321 4321 0 -1 4194560 100 0 0 0 11 12 13 14"), None);
        assert_eq!(Stat::parse(")4321 (sshd S 1"), None);
        assert_eq!(Stat::parse(&line("sshd").replace(" S ", " SS ")), None);
        assert_eq!(Stat::parse(&line("sshd").replace(" 11 12 ", " 11 x ")), None);
    }

    #[test]
    fn a_zombie_is_not_running() {
        let z = Stat::parse(&line("gone").replace(") S ", ") Z ")).unwrap();
        assert_eq!(z.state, 'Z');
        assert!(!z.running());
    }

    #[test]
    fn this_process_reads_as_itself() {
        let me = std::process::id();
        let s = Stat::read(me).expect("own stat");
        assert_eq!(s.pid, me);
        assert!(s.running() && s.starttime > 0);
        assert_eq!(s.ppid, std::os::unix::process::parent_id());
        assert!(pids().contains(&me));
        assert!(cmdline(me).is_some_and(|c| !c.is_empty()));
        assert!(ticks_per_second() >= 1.0);
        assert_eq!(Stat::read(u32::MAX), None);
    }
}

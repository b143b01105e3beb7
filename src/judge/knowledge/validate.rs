//! Invariants of the knowledge base, checked every time it is loaded.
//!
//! A broken data file must never reach a report, so `Knowledge::from_texts` refuses
//! data that breaks any of these; data/README.md lists them for authors.

use super::{format_code, Knowledge, Table};
use crate::judge::entries::{parse_code, Entry};
use crate::judge::verdict::Level;
use std::collections::HashMap;

impl Knowledge {
    /// Fills the name and code indices; reports duplicate names and malformed or
    /// duplicate codes.
    pub(super) fn build_indices(&mut self) -> Vec<String> {
        let mut problems = Vec::new();
        let index = self.name_index(&mut problems);
        let suite_codes = self.suite_code_index(&mut problems);
        self.check_group_codes(&mut problems);
        self.index = index;
        self.suite_codes = suite_codes;
        problems
    }

    /// The name index of every table; empty, padded, repeated or shared names are problems.
    fn name_index(&self, problems: &mut Vec<String>) -> HashMap<(Table, String), usize> {
        let mut index = HashMap::new();
        for table in Table::ALL {
            let entries = self.table_entries(table);
            for (i, entry) in entries.iter().enumerate() {
                let mut own: Vec<String> = Vec::new();
                for name in entry.names() {
                    let key = name.to_ascii_lowercase();
                    if name.trim() != name || name.is_empty() {
                        problems.push(format!(
                            "{}: `{}` has an empty or padded name `{name}`",
                            table.label(),
                            entry.name()
                        ));
                    }
                    if own.contains(&key) {
                        problems.push(format!("{}: `{}` lists the name `{name}` twice", table.label(), entry.name()));
                        continue;
                    }
                    own.push(key.clone());
                    match index.get(&(table, key.clone())) {
                        Some(&other) => problems.push(format!(
                            "{}: name `{name}` of `{}` is already used by `{}`",
                            table.label(),
                            entry.name(),
                            entries.get(other).map_or("?", |e: &&dyn Entry| e.name())
                        )),
                        None => {
                            index.insert((table, key), i);
                        }
                    }
                }
            }
        }
        index
    }

    /// The code index of the cipher suites; malformed or shared codes are problems.
    fn suite_code_index(&self, problems: &mut Vec<String>) -> HashMap<Vec<u8>, usize> {
        let mut suite_codes: HashMap<Vec<u8>, usize> = HashMap::new();
        for (i, suite) in self.suites.iter().enumerate() {
            let codes = std::iter::once((&suite.code, "code")).chain(suite.sslv2_code.iter().map(|c| (c, "sslv2_code")));
            for (code, field) in codes {
                match parse_code(code) {
                    Some(bytes) if format_code(&bytes) == *code => {
                        if field == "sslv2_code" && bytes.len() != 3 {
                            problems.push(format!(
                                "{}: `{}` has a two-byte sslv2_code {code}",
                                Table::Suite.label(),
                                suite.iana
                            ));
                        }
                        if let Some(&other) = suite_codes.get(&bytes) {
                            problems.push(format!(
                                "{}: code {code} of `{}` is already used by `{}`",
                                Table::Suite.label(),
                                suite.iana,
                                self.suites.get(other).map_or("?", |s| s.iana.as_str())
                            ));
                        } else {
                            suite_codes.insert(bytes, i);
                        }
                    }
                    _ => problems.push(format!(
                        "{}: `{}` has malformed {field} `{code}` (expected e.g. 0xC0,0x2F, upper-case hex)",
                        Table::Suite.label(),
                        suite.iana
                    )),
                }
            }
        }
        suite_codes
    }

    /// Group codes must be well-formed and distinct.
    fn check_group_codes(&self, problems: &mut Vec<String>) {
        let mut group_codes: HashMap<u16, &str> = HashMap::new();
        for group in &self.groups {
            let Some(code) = &group.code else { continue };
            let parsed = code
                .strip_prefix("0x")
                .filter(|h| h.len() == 4 && h.chars().all(|c| c.is_ascii_digit() || c.is_ascii_uppercase()))
                .and_then(|h| u16::from_str_radix(h, 16).ok());
            match parsed {
                Some(value) => {
                    if let Some(other) = group_codes.insert(value, &group.name) {
                        problems.push(format!(
                            "{}: code {code} of `{}` is already used by `{other}`",
                            Table::Group.label(),
                            group.name
                        ));
                    }
                }
                None => problems.push(format!(
                    "{}: `{}` has malformed code `{code}` (expected e.g. 0x001D)",
                    Table::Group.label(),
                    group.name
                )),
            }
        }
    }

    /// Checks every invariant documented in data/README.md; returns the problems.
    pub(super) fn validate(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for (id, source) in &self.sources {
            if source.title.trim().is_empty() {
                problems.push(format!("sources.toml: source `{id}` has no title"));
            }
            if !source.url.starts_with("https://") {
                problems.push(format!("sources.toml: source `{id}` needs an https:// url, has `{}`", source.url));
            }
        }
        for (id, reason) in &self.reasons {
            if reason.text.trim().is_empty() {
                problems.push(format!("reasons.toml: reason `{id}` has no text"));
            }
            if reason.refs.is_empty() {
                problems.push(format!("reasons.toml: reason `{id}` cites no source"));
            }
            for source in &reason.refs {
                if !self.sources.contains_key(source) {
                    problems.push(format!("reasons.toml: reason `{id}` cites unknown source `{source}`"));
                }
            }
        }
        for table in Table::ALL {
            for entry in self.table_entries(table) {
                self.validate_entry(table, entry, &mut problems);
            }
        }
        for suite in &self.suites {
            let at = format!("{} `{}`", Table::Suite.label(), suite.iana);
            if suite.protocols.is_empty() {
                problems.push(format!("{at}: lists no protocol"));
            }
            for p in &suite.protocols {
                if !self.protocols.iter().any(|known| &known.name == p) {
                    problems.push(format!("{at}: protocol `{p}` is not a canonical protocol name in tls.toml"));
                }
            }
            if suite.export && suite.kx_bits.is_none() {
                problems.push(format!("{at}: EXPORT suite without kx_bits"));
            }
            if suite.is_tls13() != suite.code.starts_with("0x13,") {
                problems.push(format!(
                    "{at}: TLS 1.3 suites (and only they) have codes 0x13,0x..; protocols and code disagree"
                ));
            }
        }
        problems
    }

    fn validate_entry(&self, table: Table, entry: &dyn Entry, problems: &mut Vec<String>) {
        let at = format!("{} `{}`", table.label(), entry.name());
        let ids = entry.reason_ids();
        if ids.is_empty() {
            problems.push(format!("{at}: has no reason"));
        }
        let mut lowest: Option<Level> = None;
        for (i, id) in ids.iter().enumerate() {
            if ids[..i].contains(id) {
                problems.push(format!("{at}: lists reason `{id}` twice"));
            }
            match self.reasons.get(id) {
                Some(reason) => {
                    lowest = Some(lowest.map_or(reason.ceiling, |l| l.min(reason.ceiling)));
                }
                None => problems.push(format!("{at}: unknown reason `{id}`")),
            }
        }
        if let Some(lowest) = lowest {
            if entry.level() != lowest {
                problems.push(format!(
                    "{at}: level is {} but the lowest ceiling of its reasons is {lowest}; they must be equal",
                    entry.level()
                ));
            }
        }
        if self.sources.contains_key(entry.follows()) {
            let by_reason = ids
                .iter()
                .filter_map(|id| self.reasons.get(id))
                .any(|r| r.ceiling == entry.level() && r.refs.iter().any(|s| s == entry.follows()));
            let by_opinion = entry
                .opinions()
                .iter()
                .any(|o| o.source == entry.follows() && o.level == entry.level());
            if !by_reason && !by_opinion {
                problems.push(format!(
                    "{at}: follows `{}`, but neither a reason with ceiling {} cites it nor does an opinion of it say {}",
                    entry.follows(),
                    entry.level(),
                    entry.level()
                ));
            }
        } else {
            problems.push(format!("{at}: follows unknown source `{}`", entry.follows()));
        }
        for (i, opinion) in entry.opinions().iter().enumerate() {
            if !self.sources.contains_key(&opinion.source) {
                problems.push(format!("{at}: opinion of unknown source `{}`", opinion.source));
            }
            if entry.opinions()[..i].iter().any(|o| o.source == opinion.source) {
                problems.push(format!("{at}: two opinions of source `{}`", opinion.source));
            }
            match self.reasons.get(&opinion.reason) {
                Some(reason) => {
                    if reason.ceiling != opinion.level {
                        problems.push(format!(
                            "{at}: opinion of `{}` says {} but its reason `{}` has ceiling {}",
                            opinion.source, opinion.level, opinion.reason, reason.ceiling
                        ));
                    }
                    if !reason.refs.contains(&opinion.source) {
                        problems.push(format!(
                            "{at}: opinion of `{}` uses reason `{}`, which does not cite that source",
                            opinion.source, opinion.reason
                        ));
                    }
                }
                None => problems.push(format!("{at}: opinion uses unknown reason `{}`", opinion.reason)),
            }
        }
        if entry.note().is_some_and(|n| n.trim().is_empty()) {
            problems.push(format!("{at}: empty note"));
        }
    }
}

//! The source layout keeps its promises (docs/layout.md): the pipeline's arrows
//! point one way, and no two modules import each other.
//!
//! The module graph is read from the source text itself: every `crate::…`,
//! `super::…` and `self::…` path, and every use of a child module by its bare name,
//! outside comments and outside `#[cfg(test)] mod … { … }` blocks (test code may
//! reach anywhere; the production code around them is read whole). A path names the deepest module file it reaches
//! (`crate::measure::engine::stats::overlap` → `measure/engine/stats`).
//!
//! - **No import circles:** no strongly connected group of two or more modules, where
//!   an arrow between a folder's `mod.rs` and a module inside that folder does not
//!   count (a parent declares its children, and children use their parent's shared
//!   types: that is one unit, not a circle).
//! - **No arrows back up the pipeline:** nothing in `report/`, `plan.rs`, `judge/`
//!   or `recommend/` imports from `measure/`, and nothing in `backend/` (the
//!   libraries and daemons) imports from the layers built on it.
//! - **Only the arrows of the table:** docs/layout.md holds one table of which
//!   top-level module may import which. Every top-level module has a row, every
//!   arrow between two of them is in it, and the top-level modules form no circle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

fn name(m: &Module) -> String {
    if m.is_empty() {
        "main".into()
    } else {
        m.join("/")
    }
}

/// Every module file under `src/`, by its module path.
fn modules(src: &Path) -> BTreeMap<Module, PathBuf> {
    fn walk(dir: &Path, src: &Path, out: &mut BTreeMap<Module, PathBuf>) {
        for e in std::fs::read_dir(dir).expect("read src") {
            let p = e.expect("dir entry").path();
            if p.is_dir() {
                walk(&p, src, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(src).expect("under src").with_extension("");
                let mut m: Module = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
                if m == ["main"] || m.last().is_some_and(|l| l == "mod") {
                    m.pop();
                }
                out.insert(m, p);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(src, src, &mut out);
    out
}

/// The code of a file without comments and without its test modules (each
/// `#[cfg(test)] mod NAME { … }` block, wherever it stands), on one line: the
/// production code before, between and after test modules is all read.
fn code(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("//") {
            continue;
        }
        // A trailing comment; `//` inside a string literal ("https://…") is rare in
        // paths and only ever cuts text that holds no module path.
        let line = line.find(" //").map_or(line, |i| &line[..i]);
        out.push_str(line);
        out.push(' ');
    }
    without_test_modules(&out)
}

/// `code` without the bodies of its `#[cfg(test)] mod NAME { … }` blocks. Braces
/// inside string and character literals do not count.
fn without_test_modules(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        let after = rest[at + "#[cfg(test)]".len()..].trim_start();
        let is_block = after.strip_prefix("mod ").is_some_and(|m| {
            let name_end = m.find(|c: char| !is_ident(c)).unwrap_or(m.len());
            m[name_end..].trim_start().starts_with('{')
        });
        out.push_str(&rest[..at]);
        if !is_block {
            out.push_str("#[cfg(test)]");
            rest = &rest[at + "#[cfg(test)]".len()..];
            continue;
        }
        let open = at + rest[at..].find('{').expect("a block");
        let end = block_end(&rest[open..]).map_or(rest.len(), |e| open + e);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Where the block that `s` starts with (at its `{`) ends, just after its `}`.
fn block_end(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let (mut depth, mut i) = (0usize, 0usize);
    while i < b.len() {
        match b[i] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            // A raw string: r"…", r#"…"#.
            b'r' if !s[..i].ends_with(is_ident) && matches!(b.get(i + 1), Some(b'"' | b'#')) => {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                if b.get(i + 1 + hashes) == Some(&b'"') {
                    let close = format!("\"{}", "#".repeat(hashes));
                    let from = i + 2 + hashes;
                    i = s[from..].find(&close).map_or(b.len(), |e| from + e + close.len());
                    continue;
                }
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            // A character literal ('{', '\'', '\u{7b}'), not a lifetime ('a).
            b'\'' => {
                if b.get(i + 1) == Some(&b'\\') {
                    i += 2;
                    while i < b.len() && b[i] != b'\'' {
                        i += 1;
                    }
                } else if b.get(i + 2) == Some(&b'\'') {
                    i += 2;
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The paths named at the start of `s` (just after `crate::`, `super::` …): one
/// path, or every path of a `{a, b::{c, d}}` group.
fn paths_at(s: &str) -> Vec<Module> {
    let s = s.trim_start();
    let mut prefix: Module = Vec::new();
    let mut rest = s;
    loop {
        let end = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
        let ident = &rest[..end];
        let after = &rest[end..];
        if ident.is_empty() {
            if let Some(group) = after.strip_prefix('{') {
                let mut depth = 0;
                let mut items = Vec::new();
                let mut cur = String::new();
                for c in group.chars() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            items.push(std::mem::take(&mut cur));
                            continue;
                        }
                        _ => {}
                    }
                    cur.push(c);
                }
                items.push(cur);
                return items
                    .iter()
                    .flat_map(|i| paths_at(i))
                    .map(|p| prefix.iter().cloned().chain(p).collect())
                    .collect();
            }
            return if prefix.is_empty() { Vec::new() } else { vec![prefix] };
        }
        prefix.push(ident.to_string());
        match after.strip_prefix("::") {
            Some(r) => rest = r,
            None => return vec![prefix],
        }
    }
}

/// The deepest module file that `path` reaches.
fn resolve(path: &[String], mods: &BTreeMap<Module, PathBuf>) -> Module {
    (0..=path.len())
        .rev()
        .map(|i| path[..i].to_vec())
        .find(|p| mods.contains_key(p))
        .unwrap_or_default()
}

/// Positions where `word` starts a path (not preceded by an identifier or `::`).
fn starts<'a>(code: &'a str, word: &'a str) -> impl Iterator<Item = usize> + 'a {
    code.match_indices(word).filter_map(move |(i, _)| {
        let before = &code[..i];
        let free = !before.ends_with(is_ident) && !before.ends_with("::");
        free.then_some(i + word.len())
    })
}

fn related(a: &Module, b: &Module) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// Every module's imports of modules that are neither its ancestors nor descendants.
fn graph() -> BTreeMap<Module, BTreeSet<Module>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mods = modules(&src);
    let mut edges = BTreeMap::new();
    for (m, file) in &mods {
        let code = code(&std::fs::read_to_string(file).expect("read module"));
        let mut refs: BTreeSet<Module> = BTreeSet::new();
        for at in starts(&code, "crate::") {
            refs.extend(paths_at(&code[at..]).iter().map(|p| resolve(p, &mods)));
        }
        for at in starts(&code, "super::") {
            let mut up = 1;
            let mut rest = &code[at..];
            while let Some(r) = rest.strip_prefix("super::") {
                up += 1;
                rest = r;
            }
            let base = &m[..m.len().saturating_sub(up)];
            for p in paths_at(rest) {
                refs.insert(resolve(&[base, &p[..]].concat(), &mods));
            }
        }
        for at in starts(&code, "self::") {
            for p in paths_at(&code[at..]) {
                refs.insert(resolve(&[&m[..], &p[..]].concat(), &mods));
            }
        }
        for child in mods.keys().filter(|c| c.len() == m.len() + 1 && c.starts_with(m)) {
            let word = format!("{}::", child.last().expect("child name"));
            if starts(&code, &word).next().is_some() {
                refs.insert(child.clone());
            }
        }
        refs.retain(|r| !related(m, r));
        edges.insert(m.clone(), refs);
    }
    edges
}

/// Strongly connected groups of more than one module (Tarjan).
fn circles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct State<'a> {
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        out: Vec<Vec<Module>>,
    }
    fn visit<'a>(v: &'a Module, s: &mut State<'a>) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        for w in &s.edges[v] {
            if !s.edges.contains_key(w) {
                continue;
            }
            if !s.index.contains_key(w) {
                visit(w, s);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).expect("low");
                *lv = (*lv).min(lw);
            } else if s.stack.contains(&w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).expect("low");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                comp.push(w.clone());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v) {
            visit(v, &mut s);
        }
    }
    s.out
}

#[test]
fn the_reader_sees_imports_in_all_their_forms() {
    let g = graph();
    let arrows = |from: &str| -> BTreeSet<String> {
        let m: Module = from.split('/').map(String::from).collect();
        g.get(&m).unwrap_or_else(|| panic!("no module {from}")).iter().map(name).collect()
    };
    // `use crate::x::{a, b::c}` groups, `super::` paths and plain `crate::` calls are
    // all seen (if the reader lost them, the checks below would pass vacuously).
    assert!(arrows("app").contains("measure/engine/noise") || arrows("app").iter().any(|a| a.starts_with("measure")));
    assert!(arrows("measure/ssh/bulk").iter().any(|a| a.starts_with("backend/openssh")));
    assert!(arrows("report/compare").iter().any(|a| a == "model"));
    assert!(g.values().map(BTreeSet::len).sum::<usize>() > 200, "too few arrows read");
    // A synthetic circle is found.
    let a: Module = vec!["a".into()];
    let b: Module = vec!["b".into()];
    let c: Module = vec!["c".into()];
    let toy = BTreeMap::from([
        (a.clone(), BTreeSet::from([b.clone()])),
        (b.clone(), BTreeSet::from([a.clone(), c.clone()])),
        (c.clone(), BTreeSet::new()),
    ]);
    assert_eq!(circles(&toy).len(), 1);
}

#[test]
fn no_two_modules_import_each_other() {
    let g = graph();
    let found: Vec<String> = circles(&g)
        .iter()
        .map(|c| {
            let arrows: Vec<String> = c
                .iter()
                .flat_map(|a| {
                    g[a].iter()
                        .filter(|b| c.contains(b))
                        .map(move |b| format!("{} → {}", name(a), name(b)))
                })
                .collect();
            arrows.join(", ")
        })
        .collect();
    assert!(found.is_empty(), "import circles: {}", found.join("; "));
}

#[test]
fn arrows_point_down_the_pipeline() {
    let g = graph();
    let rules: [(&str, &[&str]); 5] = [
        ("report", &["measure"]),
        ("plan", &["measure"]),
        ("judge", &["measure", "recommend", "report"]),
        ("recommend", &["measure", "report", "discover", "backend", "session", "store"]),
        (
            "backend",
            &["measure", "report", "judge", "recommend", "diff", "app", "session", "plan", "race"],
        ),
    ];
    let mut wrong = Vec::new();
    for (from, banned) in rules {
        for (m, to) in g.iter().filter(|(m, _)| m.first().is_some_and(|f| f == from) && !is_test_module(m)) {
            for t in to.iter().filter(|t| t.first().is_some_and(|f| banned.contains(&f.as_str()))) {
                wrong.push(format!("{} → {}", name(m), name(t)));
            }
        }
    }
    assert!(wrong.is_empty(), "arrows back up the pipeline: {}", wrong.join(", "));
}

/// The top-level module a module belongs to (`measure/tls/wire` → `measure`).
fn top(m: &Module) -> String {
    m.first().cloned().unwrap_or_else(|| "main".into())
}

/// Whole test modules (`mod tests;` files) may reach anywhere, as a file's trailing
/// test module may.
fn is_test_module(m: &Module) -> bool {
    m.last().is_some_and(|l| l == "tests" || l.ends_with("_tests"))
}

/// docs/layout.md's table: each top-level module and what it may import, with
/// "foundation" spelled out.
fn allowed() -> BTreeMap<String, BTreeSet<String>> {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/layout.md")).expect("docs/layout.md");
    let ticked = |s: &str| -> Vec<String> { s.split('`').skip(1).step_by(2).map(String::from).collect() };
    let foundation_at = text.find("**foundation** =").expect("docs/layout.md defines the foundation");
    let foundation_text = &text[foundation_at..];
    let foundation: BTreeSet<String> = ticked(&foundation_text[..foundation_text.find('(').expect("(")])
        .into_iter()
        .collect();
    assert!(foundation.len() >= 5, "foundation read: {foundation:?}");
    let mut table = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let [module, may] = cells[..] else {
            panic!("a row of two cells: {line}")
        };
        let mut to = BTreeSet::new();
        for word in may.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            if word == "foundation" {
                to.extend(foundation.iter().cloned());
            } else {
                to.insert(word.to_string());
            }
        }
        let name = module.trim_matches('`').to_string();
        assert!(table.insert(name.clone(), to).is_none(), "two rows for {name}");
    }
    table
}

#[test]
fn every_top_level_module_has_a_row_and_every_row_a_module() {
    let g = graph();
    let table = allowed();
    let tops: BTreeSet<String> = g.keys().filter(|m| !is_test_module(m)).map(top).collect();
    let missing: Vec<&String> = tops.iter().filter(|t| !table.contains_key(*t)).collect();
    assert!(missing.is_empty(), "top-level modules without a row in docs/layout.md: {missing:?}");
    let stale: Vec<&String> = table.keys().filter(|t| !tops.contains(*t)).collect();
    assert!(stale.is_empty(), "rows in docs/layout.md for modules that do not exist: {stale:?}");
    let unknown: Vec<String> = table.values().flatten().filter(|t| !table.contains_key(*t)).cloned().collect();
    assert!(unknown.is_empty(), "the table names modules it has no row for: {unknown:?}");
}

#[test]
fn only_the_arrows_of_the_table() {
    let g = graph();
    let table = allowed();
    let mut wrong = BTreeSet::new();
    for (m, to) in g.iter().filter(|(m, _)| !is_test_module(m)) {
        let from = top(m);
        let Some(may) = table.get(&from) else { continue };
        for t in to.iter().filter(|t| top(t) != from && !may.contains(&top(t))) {
            wrong.insert(format!("{} → {}", name(m), name(t)));
        }
    }
    assert!(
        wrong.is_empty(),
        "arrows docs/layout.md does not allow:\n{}",
        wrong.into_iter().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn no_circle_between_top_level_modules() {
    let g = graph();
    let mut tops: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (m, to) in g.iter().filter(|(m, _)| !is_test_module(m)) {
        let from = vec![top(m)];
        let entry = tops.entry(from.clone()).or_default();
        entry.extend(
            to.iter()
                .filter(|t| !is_test_module(t))
                .map(|t| vec![top(t)])
                .filter(|t| *t != from),
        );
    }
    let found: Vec<String> = circles(&tops)
        .iter()
        .map(|c| c.iter().map(name).collect::<Vec<_>>().join(" ⇄ "))
        .collect();
    assert!(found.is_empty(), "circles between top-level modules: {}", found.join("; "));
    // The table itself has no circle either (the foundation may use itself as it
    // likes in the table; the real imports among it are checked above).
    let table = allowed();
    let foundation = &table["model"];
    let table: BTreeMap<Module, BTreeSet<Module>> = table
        .iter()
        .map(|(k, v)| {
            let own = foundation.contains(k);
            let to = v.iter().filter(|t| *t != k && !(own && foundation.contains(*t)));
            (vec![k.clone()], to.map(|t| vec![t.clone()]).collect())
        })
        .collect();
    assert!(circles(&table).is_empty(), "docs/layout.md allows a circle: {:?}", circles(&table));
}

/// A test module's body is left out, with braces in its strings and characters,
/// and the production code after it is read (before, a file was cut at its first
/// test module: report/html.rs after line 17).
#[test]
fn code_after_a_test_module_is_read_and_the_module_is_not() {
    let text = "use crate::a;\n#[cfg(test)]\nmod tests {\n    use crate::hidden;\n    fn f() { let s = \"}}{\"; let c = '}'; let r = r#\"}\"#; let e = '\\''; }\n}\n\nuse crate::b; // after\n#[cfg(test)]\nmod t;\n";
    let c = code(text);
    assert!(c.contains("use crate::a;") && c.contains("use crate::b;"), "{c}");
    assert!(!c.contains("hidden"), "{c}");
    assert!(
        c.contains("#[cfg(test)] mod t;"),
        "a test module declared elsewhere is only a declaration: {c}"
    );
    let html = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/report/html.rs")).unwrap();
    let read = code(&html);
    assert!(
        read.len() > html.len() / 3,
        "most of report/html.rs is production code: {} of {}",
        read.len(),
        html.len()
    );
}

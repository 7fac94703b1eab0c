//! The library's modules form layers: no module reaches, through the paths it uses
//! (`crate::...`, `super::...`), a module that reaches it back. Read from the sources, so it
//! runs everywhere (no GPU).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `src/` as its module path (`device::transfer`, `host`, ...), with its
/// text. `lib.rs` is the crate root, which re-exports everything and is left out.
fn modules() -> BTreeMap<String, String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    let mut modules = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(&src).unwrap().with_extension("");
        let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        if parts.last().is_some_and(|p| p == "mod") {
            parts.pop();
        }
        let name = parts.join("::");
        if name == "lib" {
            continue;
        }
        modules.insert(name, std::fs::read_to_string(&file).unwrap());
    }
    modules
}

/// The module a path names: its longest prefix that is a module (`crate::sort::plan::x` names
/// `sort::plan` if that file exists, else `sort`). `None` for items of the crate root.
fn module_of(path: &[&str], modules: &BTreeMap<String, String>) -> Option<String> {
    (1..=path.len()).rev().map(|n| path[..n].join("::")).find(|m| modules.contains_key(m))
}

/// The modules `name` uses: the paths in its code (comments, doc links included, are skipped),
/// its submodules' among them, itself and its unit tests left out.
fn uses(name: &str, text: &str, modules: &BTreeMap<String, String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    // Inline modules (`mod sealed { ... }`) open so far: their indentation and name, so that
    // `super::` inside one means the file's module.
    let mut inline: Vec<(usize, &str)> = Vec::new();
    // Unit tests (an inline `mod tests` at the end of a file) are not part of the layers.
    for line in text.lines().take_while(|l| l.trim() != "mod tests {") {
        let indent = line.len() - line.trim_start().len();
        if inline.last().is_some_and(|&(i, _)| line.trim() == "}" && indent == i) {
            inline.pop();
            continue;
        }
        let decl = line.trim().trim_start_matches("pub ").trim_start_matches("pub(crate) ").trim_start_matches("pub(super) ");
        if let Some(inner) = decl.strip_prefix("mod ").and_then(|d| d.strip_suffix(" {")) {
            inline.push((indent, inner));
            continue;
        }
        let own: Vec<&str> = name.split("::").chain(inline.iter().map(|&(_, n)| n)).collect();
        let code = line.split("//").next().unwrap();
        for (start, _) in code.match_indices("crate::").chain(code.match_indices("super::")) {
            if start > 0 && code[..start].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$' || c == ':') {
                continue;
            }
            let rest = &code[start..];
            let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).unwrap_or(rest.len());
            let segments: Vec<&str> = rest[..end].split("::").filter(|s| !s.is_empty()).collect();
            let absolute: Vec<&str> = if segments[0] == "crate" {
                segments[1..].to_vec()
            } else {
                // `super::` from a file module means its parent (from mod.rs files too, as
                // their module path already names the directory).
                let ups = segments.iter().take_while(|s| **s == "super").count();
                let base = &own[..own.len().saturating_sub(ups)];
                base.iter().copied().chain(segments[ups..].iter().copied()).collect()
            };
            if let Some(m) = module_of(&absolute, modules) {
                if m != name {
                    out.insert(m);
                }
            }
        }
        // `use child::Item;` in a module with submodules.
        let statement = code.trim_start().trim_start_matches("pub ").trim_start_matches("pub(crate) ");
        if let Some(path) = statement.strip_prefix("use ") {
            let first = path.split("::").next().unwrap_or("");
            let child = format!("{name}::{first}");
            if modules.contains_key(&child) {
                out.insert(child);
            }
        }
    }
    out
}

/// Every way from a module back to itself, as `a -> b -> a` lines.
fn cycles(modules: &BTreeMap<String, String>) -> Vec<String> {
    let graph: BTreeMap<&str, BTreeSet<String>> = modules.iter().map(|(n, t)| (n.as_str(), uses(n, t, modules))).collect();
    let mut cycles = Vec::new();
    for start in graph.keys() {
        // Depth-first search for a path back to `start`, remembering the way.
        let mut stack = vec![(start.to_string(), vec![start.to_string()])];
        let mut seen = BTreeSet::new();
        while let Some((m, way)) = stack.pop() {
            for next in &graph[m.as_str()] {
                if next == start {
                    cycles.push(format!("{} -> {start}", way.join(" -> ")));
                } else if seen.insert(next.clone()) {
                    stack.push((next.clone(), [way.clone(), vec![next.clone()]].concat()));
                }
            }
        }
    }
    cycles
}

#[test]
fn no_module_reaches_itself_through_the_modules_it_uses() {
    let modules = modules();
    assert!(modules.contains_key("device") && modules.contains_key("device::transfer"), "{:?}", modules.keys());
    let cycles = cycles(&modules);
    assert!(cycles.is_empty(), "module cycles:\n{}", cycles.join("\n"));
}

#[test]
fn cycles_are_found_through_crate_and_super_paths() {
    let modules: BTreeMap<String, String> = [
        ("a", "use crate::a::inner::X; // crate::c::Y in a comment\nfn f() { crate::b::g() }\npub(crate) use e::Q;"),
        ("a::inner", "use super::super::c::Z;"),
        ("b", "/// [`crate::c`]\nuse crate::a::inner::W;"),
        ("c", "use crate::d::V;"),
        ("d", ""),
        ("a::e", ""),
        // `super::super` inside the inline module means `f`, not the crate root.
        ("f::g", "pub(super) mod sealed {\n    use super::super::h::T;\n}\nuse super::h::P;"),
        ("f::h", ""),
        ("h", ""),
    ]
    .into_iter()
    .map(|(n, t)| (n.to_string(), t.to_string()))
    .collect();
    assert_eq!(uses("a", &modules["a"], &modules), BTreeSet::from(["a::inner".to_string(), "a::e".to_string(), "b".to_string()]));
    assert_eq!(uses("a::inner", &modules["a::inner"], &modules), BTreeSet::from(["c".to_string()]));
    assert_eq!(uses("f::g", &modules["f::g"], &modules), BTreeSet::from(["f::h".to_string()]));
    assert_eq!(cycles(&modules), Vec::<String>::new());
    let mut looped = modules.clone();
    looped.insert("d".into(), "use crate::a::inner;".into());
    let found = cycles(&looped);
    assert_eq!(found.len(), 3, "{found:?}");
    assert!(found.contains(&"d -> a::inner -> c -> d".to_string()), "{found:?}");
}

/// The crate's lower floor: plumbing every algorithm stands on.
const LOWER_FLOOR: &[&str] = &["device", "key", "types", "partition", "error", "tuning", "threads", "checks", "fatbins"];
/// Front ends and tools built on the algorithms, which the lower floor must never use.
const UPPER_FLOOR: &[&str] = &["host", "slices", "multi", "testing", "cpu", "backend"];

/// The uses that go from a module of the lower floor up to one of the upper floor, as
/// `from -> to` lines.
fn upward_uses(modules: &BTreeMap<String, String>) -> Vec<String> {
    let top = |m: &str| m.split("::").next().unwrap().to_string();
    let mut found = Vec::new();
    for (name, text) in modules {
        if !LOWER_FLOOR.contains(&top(name).as_str()) {
            continue;
        }
        for used in uses(name, text, modules) {
            if UPPER_FLOOR.contains(&top(&used).as_str()) {
                found.push(format!("{name} -> {used}"));
            }
        }
    }
    found
}

#[test]
fn the_lower_floor_never_uses_the_upper_one() {
    let modules = modules();
    for floor in LOWER_FLOOR.iter().chain(UPPER_FLOOR) {
        assert!(modules.keys().any(|m| m == floor || m.starts_with(&format!("{floor}::"))), "no module {floor}");
    }
    let found = upward_uses(&modules);
    assert!(found.is_empty(), "lower-floor modules using upper-floor ones:\n{}", found.join("\n"));
}

#[test]
fn upward_uses_are_found() {
    let modules: BTreeMap<String, String> =
        [("device::transfer", "use crate::host::threads;"), ("host", "use crate::device::Gpu;"), ("key", "")].into_iter().map(|(n, t)| (n.to_string(), t.to_string())).collect();
    assert_eq!(upward_uses(&modules), vec!["device::transfer -> host".to_string()]);
}

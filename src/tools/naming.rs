//! Model-facing names for MCP tools: `mcp__{server}__{tool}`, cleaned to `[A-Za-z0-9_-]`,
//! at most [`MAX_TOOL_NAME`] characters, with a stable hash suffix when a name had to be
//! truncated or when two different tools would end up with the same name.

use std::collections::{HashMap, HashSet};

/// Longest tool name the model APIs accept.
pub const MAX_TOOL_NAME: usize = 64;

/// Prefix of every MCP tool name.
pub const MCP_PREFIX: &str = "mcp__";

/// Replaces every character outside `[A-Za-z0-9_-]` with `_`.
pub fn clean(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// FNV-1a 64: stable across runs, platforms and versions.
fn stable_hash(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn suffix(server: &str, tool: &str) -> String {
    format!(
        "{:08x}",
        stable_hash(&format!("{server}\u{0}{tool}")) as u32
    )
}

fn with_suffix(base: &str, server: &str, tool: &str) -> String {
    let sfx = suffix(server, tool);
    let keep = MAX_TOOL_NAME - sfx.len() - 1;
    let head: String = base.chars().take(keep).collect();
    format!("{head}_{sfx}")
}

/// The plain name, before collision handling.
fn plain(server: &str, tool: &str) -> (String, bool) {
    let raw = format!("{MCP_PREFIX}{server}__{tool}");
    let cleaned = format!("{MCP_PREFIX}{}__{}", clean(server), clean(tool));
    let changed = cleaned != raw;
    if cleaned.len() > MAX_TOOL_NAME {
        (with_suffix(&cleaned, server, tool), true)
    } else {
        (cleaned, changed)
    }
}

/// Assigns a unique name to every `(server, tool)` pair, in a way that does not depend on
/// their order. Among tools whose names collide, one whose name needed no cleaning keeps
/// it; the others get a hash suffix. Names in `reserved` (built-in tools) are never given
/// out. Returns the names in the order of `tools`.
pub fn assign_names(tools: &[(String, String)], reserved: &HashSet<String>) -> Vec<String> {
    let plains: Vec<(String, bool)> = tools.iter().map(|(s, t)| plain(s, t)).collect();
    let mut groups: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, (name, _)) in plains.iter().enumerate() {
        groups.entry(name.as_str()).or_default().push(i);
    }
    let mut out = Vec::with_capacity(tools.len());
    for (i, (name, changed)) in plains.iter().enumerate() {
        let group = &groups[name.as_str()];
        let keeps = if reserved.contains(name) {
            false
        } else if group.len() == 1 {
            true
        } else {
            // The untouched one keeps the name; if several or none are untouched, all
            // get suffixes (so no order decides who wins).
            let untouched: Vec<_> = group.iter().filter(|j| !plains[**j].1).collect();
            untouched.len() == 1 && !changed
        };
        out.push(if keeps {
            name.clone()
        } else {
            let (s, t) = &tools[i];
            with_suffix(name, s, t)
        });
    }
    make_unique(tools, &mut out, reserved);
    out
}

/// Settles the collisions suffixes can still leave: the same `(server, tool)` pair listed
/// twice, or a suffixed name equal to another tool's name. In each group of equal names
/// the smallest `(server, tool)` keeps it and the others get a counted suffix, so the
/// result depends on the set of tools, not on their order.
fn make_unique(tools: &[(String, String)], names: &mut [String], reserved: &HashSet<String>) {
    let mut taken: HashSet<String> = reserved.clone();
    taken.extend(names.iter().cloned());
    let mut groups: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, name) in names.iter().enumerate() {
        groups.entry(name.as_str()).or_default().push(i);
    }
    let mut clashes: Vec<Vec<usize>> = groups.into_values().filter(|g| g.len() > 1).collect();
    if clashes.is_empty() {
        return;
    }
    for g in &mut clashes {
        g.sort_by(|a, b| tools[*a].cmp(&tools[*b]));
    }
    clashes.sort_by(|a, b| names[a[0]].cmp(&names[b[0]]));
    for group in clashes {
        let base = names[group[0]].clone();
        let mut counter = 0u32;
        for &i in &group[1..] {
            let (s, t) = &tools[i];
            let name = loop {
                counter += 1;
                let candidate = with_suffix(&base, s, &format!("{t}\u{0}{counter}"));
                if !taken.contains(&candidate) {
                    break candidate;
                }
            };
            taken.insert(name.clone());
            names[i] = name;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(pairs: &[(&str, &str)], reserved: &[&str]) -> Vec<String> {
        let tools: Vec<_> = pairs
            .iter()
            .map(|(s, t)| (s.to_string(), t.to_string()))
            .collect();
        let reserved = reserved.iter().map(|s| s.to_string()).collect();
        assign_names(&tools, &reserved)
    }

    #[test]
    fn plain_names() {
        assert_eq!(
            names(&[("demo", "read_file"), ("my server", "get.weather")], &[]),
            vec!["mcp__demo__read_file", "mcp__my_server__get_weather"]
        );
    }

    #[test]
    fn collision_after_cleaning() {
        let n = names(
            &[
                ("s", "get weather"),
                ("s", "get.weather"),
                ("s", "get_weather"),
            ],
            &[],
        );
        assert_eq!(n[2], "mcp__s__get_weather");
        assert!(
            n[0].starts_with("mcp__s__get_weather_") && n[0].len() == 28,
            "{n:?}"
        );
        assert_ne!(n[0], n[1]);
        // Order does not matter.
        let m = names(
            &[
                ("s", "get_weather"),
                ("s", "get.weather"),
                ("s", "get weather"),
            ],
            &[],
        );
        assert_eq!(
            (m[0].as_str(), m[1].as_str(), m[2].as_str()),
            (n[2].as_str(), n[1].as_str(), n[0].as_str())
        );
    }

    #[test]
    fn truncation_is_stable_and_bounded() {
        let long = "x".repeat(100);
        let a = names(&[("srv", &long)], &[]);
        assert_eq!(a[0].len(), MAX_TOOL_NAME);
        assert_eq!(a, names(&[("srv", &long)], &[]));
        let other = format!("{long}y");
        let b = names(&[("srv", &long), ("srv", &other)], &[]);
        assert_ne!(b[0], b[1]);
        assert!(b.iter().all(|n| n.len() <= MAX_TOOL_NAME));
    }

    #[test]
    fn builtin_wins() {
        let n = names(&[("a", "b")], &["mcp__a__b"]);
        assert_ne!(n[0], "mcp__a__b");
        assert!(n[0].starts_with("mcp__a__b_"));
    }

    #[test]
    fn repeats_and_suffix_lookalikes_get_distinct_names() {
        // The same pair twice.
        let n = names(&[("s", "t"), ("s", "t")], &[]);
        assert_ne!(n[0], n[1]);
        assert!(n.iter().all(|x| x.starts_with("mcp__s__t_")), "{n:?}");
        // A tool literally named like another's suffixed name.
        let a = names(&[("s", "a b"), ("s", "a_b")], &[]);
        let lookalike = a[0].strip_prefix("mcp__s__").unwrap().to_string();
        let pairs = [("s", "a b"), ("s", "a_b"), ("s", lookalike.as_str())];
        let n = names(&pairs, &[]);
        let set: HashSet<_> = n.iter().collect();
        assert_eq!(set.len(), 3, "{n:?}");
        assert!(n.iter().all(|x| x.len() <= MAX_TOOL_NAME));
        // Any order gives each pair the same name.
        let mut rev = pairs;
        rev.reverse();
        let mut m = names(&rev, &[]);
        m.reverse();
        assert_eq!(n, m);
    }

    #[test]
    fn unicode_cleaned() {
        assert_eq!(
            names(&[("s", "ünïcode/tool")], &[])[0],
            "mcp__s___n_code_tool"
        );
    }
}

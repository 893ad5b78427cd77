//! The built-in, read-only file tools (`read_file`, `list_dir`, `search_text`)
//! and the path confinement that keeps them inside the project folder.
//!
//! Everything here is synchronous `std::fs` code; the protocol layer runs each
//! call on tokio's blocking pool. Failures are returned as [`ToolError`] text
//! that tells the model what went wrong and what to try instead.

use std::fmt::Write as _;
use std::fs::{self, File};
use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// Largest file `read_file` returns whole, and the cap on any one output.
const MAX_READ_BYTES: u64 = 10 * 1024 * 1024;
/// How much of a file's start is checked for NUL bytes to spot binaries.
const BINARY_SNIFF_BYTES: usize = 8 * 1024;
const DEFAULT_MAX_RESULTS: u64 = 200;
const MAX_LIST_ENTRIES: usize = 1000;
/// Matching lines longer than this (in chars) are shortened in the output.
const MAX_MATCH_LINE_CHARS: usize = 400;
/// Folder names `search_text` never descends into.
const SKIPPED_DIRS: [&str; 3] = [".git", "node_modules", "target"];

/// A tool failure, reported to the client as a result with `isError: true`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ToolError(pub(super) String);

pub(super) type ToolResult = Result<String, ToolError>;

fn fail<T>(message: impl Into<String>) -> Result<T, ToolError> {
    Err(ToolError(message.into()))
}

/// The project folder every tool is confined to.
#[derive(Debug)]
pub(super) struct Project {
    /// Canonical (absolute, symlink-free) path of the project folder.
    root: PathBuf,
}

impl Project {
    pub(super) fn new(root: &Path) -> io::Result<Self> {
        let root = fs::canonicalize(root)?;
        if !root.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("project folder {} is not a folder", root.display()),
            ));
        }
        Ok(Self { root })
    }

    pub(super) fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a client-supplied path (relative to the root, or absolute)
    /// to its canonical form, refusing anything that lands outside the root
    /// (via `..`, an absolute path, or a symlink). A path that does not exist
    /// is judged by its nearest existing ancestor, so a missing file outside
    /// the root is still reported as outside rather than as missing.
    fn resolve(&self, user: &str) -> Result<PathBuf, ToolError> {
        let joined = self.root.join(if user.is_empty() { "." } else { user });
        match fs::canonicalize(&joined) {
            Ok(real) if real.starts_with(&self.root) => Ok(real),
            Ok(_) => fail(outside_message(user)),
            Err(err) => {
                let mut ancestor = joined.parent();
                while let Some(dir) = ancestor {
                    if let Ok(real) = fs::canonicalize(dir) {
                        if !real.starts_with(&self.root) {
                            return fail(outside_message(user));
                        }
                        break;
                    }
                    ancestor = dir.parent();
                }
                fail(io_message(user, &err))
            }
        }
    }

    /// `real` (canonical, inside the root) relative to the root, with `/`
    /// separators; `.` for the root itself.
    fn relative(&self, real: &Path) -> String {
        let rel = real.strip_prefix(&self.root).unwrap_or(real);
        let parts: Vec<_> = rel.iter().map(|p| p.to_string_lossy()).collect();
        if parts.is_empty() {
            ".".to_owned()
        } else {
            parts.join("/")
        }
    }
}

fn outside_message(user: &str) -> String {
    format!(
        "path '{user}' is outside the project folder; only files inside it can be accessed. \
         Use a path relative to the project folder (list_dir with no path shows its top level)."
    )
}

fn io_message(user: &str, err: &io::Error) -> String {
    match err.kind() {
        io::ErrorKind::NotFound => format!(
            "'{user}' does not exist in the project folder; check the spelling, \
             or use list_dir / search_text to find the right path."
        ),
        io::ErrorKind::PermissionDenied => {
            format!("permission denied reading '{user}'; try a different file.")
        }
        _ => format!("cannot access '{user}': {err}"),
    }
}

/// Validated view of a tool call's `arguments` object.
pub(super) struct Args<'a> {
    map: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    /// Refuses argument names `tool` does not declare in `allowed`.
    pub(super) fn new(
        map: &'a Map<String, Value>,
        tool: &str,
        allowed: &[&str],
    ) -> Result<Self, ToolError> {
        if let Some(unknown) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
            return fail(format!(
                "{tool} does not take an argument named '{unknown}'; its arguments are: {}.",
                allowed.join(", ")
            ));
        }
        Ok(Self { map })
    }

    /// The value of `key`, treating an explicit `null` as absent.
    fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    fn str(&self, key: &str) -> Result<Option<&'a str>, ToolError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => fail(format!("argument '{key}' must be a string, not {other}.")),
        }
    }

    fn required_str(&self, key: &str) -> Result<&'a str, ToolError> {
        match self.str(key)? {
            Some(s) => Ok(s),
            None => fail(format!("missing required argument '{key}' (a string).")),
        }
    }

    /// A positive integer; numeric strings such as `"10"` are accepted too.
    fn positive_int(&self, key: &str) -> Result<Option<u64>, ToolError> {
        let value = match self.get(key) {
            None => return Ok(None),
            Some(Value::Number(n)) => n.as_u64(),
            Some(Value::String(s)) => s.trim().parse().ok(),
            Some(_) => None,
        };
        match value {
            Some(n) if n >= 1 => Ok(Some(n)),
            _ => fail(format!(
                "argument '{key}' must be a whole number of at least 1, not {}.",
                self.map[key]
            )),
        }
    }
}

/// Opens `path` for line reading; `Ok(None)` if its start contains a NUL byte.
fn open_text(path: &Path) -> io::Result<Option<BufReader<File>>> {
    let mut reader = BufReader::with_capacity(64 * 1024, File::open(path)?);
    let head = reader.fill_buf()?;
    let sniff = &head[..head.len().min(BINARY_SNIFF_BYTES)];
    Ok((!sniff.contains(&0)).then_some(reader))
}

fn strip_newline(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn binary_message(user: &str) -> String {
    format!("'{user}' looks like a binary file (not UTF-8 text); read_file only reads text files.")
}

pub(super) fn read_file(project: &Project, args: &Args<'_>) -> ToolResult {
    let user = args.required_str("path")?;
    let offset = args.positive_int("offset")?;
    let limit = args.positive_int("limit")?;
    let real = project.resolve(user)?;
    let meta = fs::metadata(&real).map_err(|e| ToolError(io_message(user, &e)))?;
    if meta.is_dir() {
        return fail(format!(
            "'{user}' is a folder, not a file; use list_dir to see what it contains."
        ));
    }
    if !meta.is_file() {
        return fail(format!("'{user}' is not a regular file."));
    }
    if meta.len() > MAX_READ_BYTES && offset.is_none() && limit.is_none() {
        return fail(format!(
            "'{user}' is {} bytes, over the 10 MiB limit for reading a whole file; \
             pass offset and limit (in lines) to read it in parts, \
             or use search_text to find the lines you need.",
            meta.len()
        ));
    }
    let io_err = |e: io::Error| ToolError(io_message(user, &e));
    let Some(mut reader) = open_text(&real).map_err(io_err)? else {
        return fail(binary_message(user));
    };
    let start = offset.unwrap_or(1);
    let mut out = String::new();
    let mut line = Vec::new();
    let (mut line_no, mut shown) = (0u64, 0u64);
    let mut stopped = None; // Some(reason) when lines remain unread.
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).map_err(io_err)? == 0 {
            break;
        }
        line_no += 1;
        if line_no < start {
            continue;
        }
        if limit == Some(shown) {
            stopped = Some("more lines follow");
            break;
        }
        if (out.len() + line.len()) as u64 > MAX_READ_BYTES {
            if shown == 0 {
                return fail(format!(
                    "line {line_no} of '{user}' is longer than 10 MiB and cannot be shown."
                ));
            }
            stopped = Some("output stopped at 10 MiB");
            break;
        }
        let text = std::str::from_utf8(strip_newline(&line))
            .map_err(|_| ToolError(binary_message(user)))?;
        let _ = writeln!(out, "{line_no:>6}\t{text}");
        shown += 1;
    }
    if line_no == 0 {
        return Ok(format!("('{user}' is empty)"));
    }
    if shown == 0 && stopped.is_none() {
        return fail(format!(
            "offset {start} is past the end of '{user}', which has {line_no} lines; \
             use a smaller offset."
        ));
    }
    if let Some(reason) = stopped {
        let _ = write!(
            out,
            "({reason}; call read_file with offset={line_no} to continue)"
        );
    }
    Ok(out)
}

pub(super) fn list_dir(project: &Project, args: &Args<'_>) -> ToolResult {
    let user = args.str("path")?.unwrap_or(".");
    let real = project.resolve(user)?;
    let io_err = |e: io::Error| ToolError(io_message(user, &e));
    if !fs::metadata(&real).map_err(io_err)?.is_dir() {
        return fail(format!(
            "'{user}' is a file, not a folder; use read_file to read it."
        ));
    }
    let mut entries = Vec::new();
    for entry in fs::read_dir(&real).map_err(io_err)? {
        let entry = entry.map_err(io_err)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let line = match entry.file_type() {
            Ok(t) if t.is_dir() => format!("{name}/"),
            Ok(t) if t.is_symlink() => match fs::read_link(entry.path()) {
                Ok(target) => format!("{name} -> {}", target.display()),
                Err(_) => format!("{name} -> (unreadable symlink)"),
            },
            Ok(t) if t.is_file() => match entry.metadata() {
                Ok(m) => format!("{name}  ({} bytes)", m.len()),
                Err(_) => name.clone(),
            },
            _ => format!("{name}  (special file)"),
        };
        entries.push((name, line));
    }
    entries.sort();
    let shown = project.relative(&real);
    if entries.is_empty() {
        return Ok(format!("Folder '{shown}' is empty."));
    }
    let mut out = format!("Folder '{shown}' ({} entries):\n", entries.len());
    for (_, line) in entries.iter().take(MAX_LIST_ENTRIES) {
        out.push_str(line);
        out.push('\n');
    }
    if entries.len() > MAX_LIST_ENTRIES {
        let _ = writeln!(
            out,
            "(showing the first {MAX_LIST_ENTRIES} of {} entries; \
             use search_text to find specific files)",
            entries.len()
        );
    }
    Ok(out)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Accumulates `search_text` matches until `max` is exceeded.
struct Search<'a> {
    project: &'a Project,
    needle: &'a [u8],
    max: u64,
    out: String,
    matches: u64,
    files: u64,
    capped: bool,
}

impl Search<'_> {
    /// Depth-first, name-sorted walk that does not follow symlinks.
    fn walk(&mut self, dir: &Path) {
        let mut stack = vec![dir.to_path_buf()];
        while let Some(dir) = stack.pop() {
            let Ok(read) = fs::read_dir(&dir) else {
                continue;
            };
            let mut entries: Vec<_> = read.filter_map(Result::ok).collect();
            entries.sort_by_key(|e| e.file_name());
            let mut subdirs = Vec::new();
            for entry in entries {
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if kind.is_dir() {
                    if !SKIPPED_DIRS.iter().any(|s| entry.file_name() == *s) {
                        subdirs.push(entry.path());
                    }
                } else if kind.is_file() {
                    self.file(&entry.path());
                    if self.capped {
                        return;
                    }
                }
            }
            stack.extend(subdirs.into_iter().rev());
        }
    }

    fn file(&mut self, path: &Path) {
        let Ok(Some(mut reader)) = open_text(path) else {
            return;
        };
        self.files += 1;
        let rel = self.project.relative(path);
        let mut line = Vec::new();
        let mut line_no = 0u64;
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => line_no += 1,
            }
            let text = strip_newline(&line);
            if !contains(text, self.needle) {
                continue;
            }
            if self.matches == self.max {
                self.capped = true;
                return;
            }
            self.matches += 1;
            let text = String::from_utf8_lossy(text);
            let mut chars = text.char_indices();
            let shown = match chars.nth(MAX_MATCH_LINE_CHARS) {
                Some((cut, _)) => format!("{}…", text.get(..cut).unwrap_or_default()),
                None => text.into_owned(),
            };
            let _ = writeln!(self.out, "{rel}:{line_no}: {shown}");
        }
    }
}

pub(super) fn search_text(project: &Project, args: &Args<'_>) -> ToolResult {
    let pattern = args.required_str("pattern")?;
    let user = args.str("path")?.unwrap_or(".");
    let max = args
        .positive_int("max_results")?
        .unwrap_or(DEFAULT_MAX_RESULTS);
    if pattern.is_empty() {
        return fail("pattern must not be empty; give the exact text to look for.");
    }
    if pattern.contains('\n') {
        return fail("pattern must be a single line; search_text matches text within one line.");
    }
    let real = project.resolve(user)?;
    let meta = fs::metadata(&real).map_err(|e| ToolError(io_message(user, &e)))?;
    let mut search = Search {
        project,
        needle: pattern.as_bytes(),
        max,
        out: String::new(),
        matches: 0,
        files: 0,
        capped: false,
    };
    if meta.is_dir() {
        search.walk(&real);
    } else {
        search.file(&real);
    }
    if search.matches == 0 {
        return Ok(format!(
            "No matches for \"{pattern}\" in '{user}' ({} text files searched; .git, node_modules, \
             target, symlinks and binary files are skipped). \
             The search is case-sensitive and literal.",
            search.files
        ));
    }
    if search.capped {
        let _ = write!(
            search.out,
            "(stopped after {max} matches; \
             use a more specific pattern or path, or raise max_results)"
        );
    }
    Ok(search.out)
}

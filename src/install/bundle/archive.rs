//! A bundle file: a zip archive of stored or deflated entries, maybe followed by a
//! signature block (`MCPB_SIG_V1` … `MCPB_SIG_END`, which the official packer appends).
//!
//! [`scan`] reads what a plan needs without writing anything: the manifest, the names of
//! the files, their declared sizes. [`unpack`] writes the files into a new folder and then
//! renames it into place, so a folder in place is always a whole bundle. Both refuse what
//! could escape the folder or fill the disk, whatever the archive claims:
//! - a name that is absolute, has `..`, `.`, an empty part, a backslash, a drive or a NUL;
//!   two entries with one name;
//! - a symbolic link or any entry that is not a plain file or folder; an encrypted entry;
//! - more than [`Limits::entries`] entries, more than [`Limits::unpacked`] bytes unpacked
//!   (counted as they are written, not as declared), an entry that unpacks to more than
//!   [`Limits::ratio`] times its packed size (a zip bomb), a file larger than
//!   [`Limits::file`].
//!
//! Files are written as the user's, readable by all, executable when the archive says so;
//! no other mode bit (setuid, sticky) is kept.

use std::collections::BTreeSet;
use std::io::{Cursor, Read, Write};
use std::path::{Path, PathBuf};

use sha2::Digest;

use super::manifest::{relative_path_ok, MAX_MANIFEST};

/// The start of the signature block.
const SIG_HEADER: &[u8] = b"MCPB_SIG_V1";
/// Its end (the last bytes of a signed bundle).
const SIG_FOOTER: &[u8] = b"MCPB_SIG_END";

/// Entries smaller than this unpacked are not judged by their ratio.
const RATIO_FLOOR: u64 = 1024 * 1024;

/// What a bundle may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest bundle file.
    pub file: u64,
    /// Most entries.
    pub entries: usize,
    /// Most bytes unpacked, in all.
    pub unpacked: u64,
    /// Largest unpacked size over packed size of one entry.
    pub ratio: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            file: 512 * 1024 * 1024,
            entries: 20_000,
            unpacked: 1024 * 1024 * 1024,
            ratio: 200,
        }
    }
}

/// A bundle read into memory.
#[derive(Debug, Clone)]
pub struct Bundle {
    bytes: Vec<u8>,
    /// Where the zip archive ends (the signature block starts).
    zip_len: usize,
    pub signed: bool,
    /// SHA-256 of the whole file, hex.
    pub sha256: String,
}

/// What [`scan`] found.
#[derive(Debug, Clone)]
pub struct Scanned {
    pub manifest: Vec<u8>,
    /// The files (not folders), by their names in the archive.
    pub files: BTreeSet<String>,
    /// Declared unpacked size.
    pub unpacked: u64,
}

/// Reads the bundle at `path` (at most `limits.file` bytes).
pub fn read(path: &Path, limits: &Limits) -> Result<Bundle, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("it cannot be read ({e})"))?;
    let mut bytes = Vec::new();
    f.take(limits.file + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("it cannot be read ({e})"))?;
    if bytes.len() as u64 > limits.file {
        return Err(format!(
            "it is larger than {} MB",
            limits.file / (1024 * 1024)
        ));
    }
    Ok(Bundle::from_bytes(bytes))
}

impl Bundle {
    pub fn from_bytes(bytes: Vec<u8>) -> Bundle {
        let sha256 = sha2::Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let (zip_len, signed) = signature_start(&bytes).map_or((bytes.len(), false), |i| (i, true));
        Bundle {
            bytes,
            zip_len,
            signed,
            sha256,
        }
    }

    fn zip(&self) -> &[u8] {
        self.bytes.get(..self.zip_len).unwrap_or(&self.bytes)
    }
}

/// Where a signature block starts, when the file ends with one.
fn signature_start(bytes: &[u8]) -> Option<usize> {
    if !bytes.ends_with(SIG_FOOTER) {
        return None;
    }
    // The block holds a length and a PKCS#7 signature: look in its last 1 MB only.
    let from = bytes.len().saturating_sub(1024 * 1024);
    let tail = bytes.get(from..)?;
    memchr::memmem::rfind(tail, SIG_HEADER).map(|i| from + i)
}

type Archive<'a> = zip::ZipArchive<Cursor<&'a [u8]>>;

fn open(b: &Bundle) -> Result<Archive<'_>, String> {
    zip::ZipArchive::new(Cursor::new(b.zip())).map_err(|e| format!("it is not a zip archive ({e})"))
}

/// One entry's name and kind, checked.
enum Kind {
    File(String),
    Folder(String),
}

fn entry_kind(file: &zip::read::ZipFile<'_, Cursor<&[u8]>>) -> Result<Kind, String> {
    let raw = file.name_raw();
    let shown = String::from_utf8_lossy(raw);
    let shown = crate::truncate::prefix(&shown, 200).to_string();
    let Ok(name) = std::str::from_utf8(raw) else {
        return Err(format!(
            "the entry \"{shown}\" has a name that is not UTF-8"
        ));
    };
    if file.encrypted() {
        return Err(format!("the entry \"{shown}\" is encrypted"));
    }
    let mode = file.unix_mode().unwrap_or(0);
    let kind_bits = mode & 0o170_000;
    let is_dir = name.ends_with('/');
    if file.is_symlink() || kind_bits == 0o120_000 {
        return Err(format!("the entry \"{shown}\" is a symbolic link"));
    }
    if kind_bits != 0 && kind_bits != 0o100_000 && kind_bits != 0o040_000 {
        return Err(format!(
            "the entry \"{shown}\" is not a plain file or folder"
        ));
    }
    let bare = name.strip_suffix('/').unwrap_or(name);
    if !relative_path_ok(bare) {
        return Err(format!(
            "the entry \"{shown}\" would be written outside the bundle's folder"
        ));
    }
    Ok(if is_dir || kind_bits == 0o040_000 {
        Kind::Folder(bare.to_string())
    } else {
        Kind::File(bare.to_string())
    })
}

fn check_sizes(
    name: &str,
    packed: u64,
    unpacked: u64,
    total: &mut u64,
    limits: &Limits,
) -> Result<(), String> {
    *total = total.saturating_add(unpacked);
    if *total > limits.unpacked {
        return Err(format!(
            "it unpacks to more than {} MB",
            limits.unpacked / (1024 * 1024)
        ));
    }
    if unpacked >= RATIO_FLOOR && unpacked > packed.saturating_mul(limits.ratio) {
        return Err(format!(
            "the entry \"{}\" unpacks to more than {} times its size (a zip bomb?)",
            crate::truncate::prefix(name, 200),
            limits.ratio
        ));
    }
    Ok(())
}

/// Reads the manifest and checks every entry's name, kind and declared size.
pub fn scan(b: &Bundle, limits: &Limits) -> Result<Scanned, String> {
    let mut archive = open(b)?;
    if archive.len() > limits.entries {
        return Err(format!("it has more than {} entries", limits.entries));
    }
    let mut files = BTreeSet::new();
    let mut folders = BTreeSet::new();
    let mut total = 0u64;
    for i in 0..archive.len() {
        let file = archive
            .by_index_raw(i)
            .map_err(|e| format!("its entry {i} cannot be read ({e})"))?;
        let (packed, unpacked) = (file.compressed_size(), file.size());
        match entry_kind(&file)? {
            Kind::File(name) => {
                check_sizes(&name, packed, unpacked, &mut total, limits)?;
                if folders.contains(&name) || !files.insert(name.clone()) {
                    return Err(format!(
                        "the entry \"{}\" is in it twice",
                        crate::truncate::prefix(&name, 200)
                    ));
                }
            }
            Kind::Folder(name) => {
                if files.contains(&name) {
                    return Err(format!(
                        "the entry \"{}\" is in it twice",
                        crate::truncate::prefix(&name, 200)
                    ));
                }
                folders.insert(name);
            }
        }
    }
    let manifest = {
        let file = archive
            .by_name("manifest.json")
            .map_err(|_| "it has no manifest.json".to_string())?;
        let mut out = Vec::new();
        file.take(MAX_MANIFEST + 1)
            .read_to_end(&mut out)
            .map_err(|e| format!("its manifest.json cannot be read ({e})"))?;
        if out.len() as u64 > MAX_MANIFEST {
            return Err("its manifest.json is larger than 1 MB".into());
        }
        out
    };
    Ok(Scanned {
        manifest,
        files,
        unpacked: total,
    })
}

/// A name for a folder being written, unique enough beside its siblings.
fn temp_name(prefix: &str) -> String {
    let mut r = [0u8; 8];
    let _ = getrandom::fill(&mut r);
    let hex: String = r.iter().map(|b| format!("{b:02x}")).collect();
    format!(".{prefix}-{hex}")
}

/// Unpacks the bundle into `parent/name` (replacing what was there), through a new
/// folder beside it. Returns the folder.
pub fn unpack(b: &Bundle, limits: &Limits, parent: &Path, name: &str) -> Result<PathBuf, String> {
    std::fs::create_dir_all(parent)
        .map_err(|e| format!("\"{}\" cannot be made ({e})", parent.display()))?;
    let temp = parent.join(temp_name("unpack"));
    std::fs::create_dir(&temp)
        .map_err(|e| format!("\"{}\" cannot be made ({e})", temp.display()))?;
    let done = write_all(b, limits, &temp).and_then(|()| {
        let dest = parent.join(name);
        if dest.exists() {
            let old = parent.join(temp_name("old"));
            std::fs::rename(&dest, &old)
                .map_err(|e| format!("\"{}\" cannot be replaced ({e})", dest.display()))?;
            let moved = std::fs::rename(&temp, &dest);
            let _ = std::fs::remove_dir_all(&old);
            moved.map_err(|e| format!("\"{}\" cannot be written ({e})", dest.display()))?;
        } else {
            std::fs::rename(&temp, &dest)
                .map_err(|e| format!("\"{}\" cannot be written ({e})", dest.display()))?;
        }
        Ok(dest)
    });
    if done.is_err() {
        let _ = std::fs::remove_dir_all(&temp);
    }
    done
}

fn write_all(b: &Bundle, limits: &Limits, into: &Path) -> Result<(), String> {
    let mut archive = open(b)?;
    if archive.len() > limits.entries {
        return Err(format!("it has more than {} entries", limits.entries));
    }
    let mut total = 0u64;
    let mut buf = vec![0u8; 64 * 1024];
    for i in 0..archive.len() {
        let mut file = archive
            .by_index(i)
            .map_err(|e| format!("its entry {i} cannot be read ({e})"))?;
        let name = match entry_kind(&file)? {
            Kind::Folder(name) => {
                std::fs::create_dir_all(into.join(&name))
                    .map_err(|e| format!("\"{name}\" cannot be made ({e})"))?;
                continue;
            }
            Kind::File(name) => name,
        };
        let packed = file.compressed_size().max(1);
        let executable = file.unix_mode().is_some_and(|m| m & 0o111 != 0);
        let path = into.join(&name);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("\"{name}\" cannot be made ({e})"))?;
        }
        let mut out = open_new(&path, executable)
            .map_err(|e| format!("\"{name}\" cannot be written ({e})"))?;
        let mut written = 0u64;
        loop {
            let n = file
                .read(&mut buf)
                .map_err(|e| format!("the entry \"{name}\" cannot be unpacked ({e})"))?;
            if n == 0 {
                break;
            }
            written += n as u64;
            // Counted as written: declared sizes may lie.
            let mut t = total;
            check_sizes(&name, packed, written, &mut t, limits)?;
            out.write_all(buf.get(..n).unwrap_or_default())
                .map_err(|e| format!("\"{name}\" cannot be written ({e})"))?;
        }
        total += written;
    }
    Ok(())
}

fn open_new(path: &Path, executable: bool) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(if executable { 0o755 } else { 0o644 });
    }
    #[cfg(not(unix))]
    let _ = executable;
    o.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use zip::write::SimpleFileOptions;

    fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (name, data) in entries {
            w.start_file(*name, SimpleFileOptions::default()).unwrap();
            w.write_all(data).unwrap();
        }
        w.finish().unwrap().into_inner()
    }

    #[test]
    fn a_signed_bundle_is_read_without_its_signature_block() {
        let mut bytes = zip_of(&[("manifest.json", b"{}")]);
        let zip_len = bytes.len();
        bytes.extend_from_slice(b"MCPB_SIG_V1\x04\x00\x00\x00sig!MCPB_SIG_END");
        let b = Bundle::from_bytes(bytes);
        assert!(b.signed);
        assert_eq!(b.zip().len(), zip_len);
        let s = scan(&b, &Limits::default()).unwrap();
        assert_eq!(s.manifest, b"{}");
        assert!(!Bundle::from_bytes(zip_of(&[("a", b"")])).signed);
    }

    #[test]
    fn unpacking_replaces_the_folder_whole() {
        let dir = tempfile::tempdir().unwrap();
        let b = Bundle::from_bytes(zip_of(&[("manifest.json", b"{}"), ("a/b.txt", b"x")]));
        let dest = unpack(&b, &Limits::default(), dir.path(), "x@1").unwrap();
        assert_eq!(std::fs::read(dest.join("a/b.txt")).unwrap(), b"x");
        let b = Bundle::from_bytes(zip_of(&[("manifest.json", b"{}")]));
        unpack(&b, &Limits::default(), dir.path(), "x@1").unwrap();
        assert!(!dest.join("a").exists());
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["x@1"]);
    }
}

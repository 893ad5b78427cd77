//! `harness9 bench bundle`: how long installing a bundle takes — the plan (read the file,
//! check every entry, read the manifest) and the commit (unpack into a new folder, rename
//! it into place, write the entry) — for a bundle of about 20 MB made here: a binary
//! server's script, 2 MB of text (packed small) and 18 MB that does not pack (as bundled
//! dependencies with native parts do), in 400 files. Everything happens in a temporary
//! folder: its own data folder, project and credential store in memory.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::config::{Scope, ScopeFiles};
use crate::install::{Answers, BundleInstall, Installer};
use crate::mcp::auth::CredentialStore;
use crate::trust::ApprovalStore;

/// Size of the bundle made, roughly.
pub const BUNDLE_MB: usize = 20;

/// Writes the bundle into `dir`; returns its path and size.
fn make_bundle(dir: &Path) -> std::io::Result<(std::path::PathBuf, u64)> {
    use zip::write::SimpleFileOptions;
    let path = dir.join("bench.mcpb");
    let mut w = zip::ZipWriter::new(std::fs::File::create(&path)?);
    let deflated =
        SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    let manifest = serde_json::json!({
        "manifest_version": "0.3", "name": "bench-bundle", "version": "1.0.0",
        "description": "A bundle of about 20 MB", "author": {"name": "harness9"},
        "server": {"type": "binary", "entry_point": "server/run.sh",
                   "mcp_config": {"command": "${__dirname}/server/run.sh", "args": ["${user_config.dir}"]}},
        "user_config": {"dir": {"type": "directory", "default": "${HOME}"}}
    });
    w.start_file("manifest.json", deflated)?;
    w.write_all(manifest.to_string().as_bytes())?;
    w.start_file("server/run.sh", deflated.unix_permissions(0o755))?;
    w.write_all(b"#!/bin/sh\nexit 0\n")?;
    // Text that packs well: 2 MB in 100 files.
    let line = b"export function f(x) { return x * 2; } // some source text of a dependency\n";
    for i in 0..100 {
        w.start_file(format!("node_modules/dep{i}/index.js"), deflated)?;
        for _ in 0..(20 * 1024 / line.len() + 1) {
            w.write_all(line)?;
        }
    }
    // Bytes that do not pack (a fast xorshift stream): the rest, in 300 files.
    let rest = (BUNDLE_MB - 2) * 1024 * 1024;
    let per = rest / 300;
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut buf = vec![0u8; per];
    for i in 0..300 {
        for chunk in buf.chunks_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let b = x.to_le_bytes();
            let n = chunk.len();
            chunk.copy_from_slice(b.get(..n).unwrap_or_default());
        }
        w.start_file(format!("native/part{i}.bin"), deflated)?;
        w.write_all(&buf)?;
    }
    w.finish().map_err(std::io::Error::other)?;
    let size = std::fs::metadata(&path)?.len();
    Ok((path, size))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Runs the benchmark: `runs` installs (3 with `quick`), each into a fresh data folder;
/// prints each and the median. Exit code 0, or 1 when an install failed.
pub fn run(quick: bool) -> i32 {
    let runs = if quick { 3 } else { 9 };
    let Ok(rt) = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    else {
        eprintln!("harness9: no runtime");
        return 1;
    };
    let Ok(tmp) = tempfile_dir() else {
        eprintln!("harness9: no temporary folder");
        return 1;
    };
    let (bundle, size) = match make_bundle(&tmp) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("harness9: the bundle could not be made: {e}");
            return 1;
        }
    };
    println!(
        "bundle: {:.1} MB file, {BUNDLE_MB} MB unpacked, 402 files",
        size as f64 / (1024.0 * 1024.0)
    );
    let mut totals = Vec::new();
    for i in 0..runs {
        let run_dir = tmp.join(format!("run{i}"));
        let (project, data) = (run_dir.join("project"), run_dir.join("data"));
        if std::fs::create_dir_all(&project).is_err() {
            return 1;
        }
        let installer = Installer::new(
            &project,
            ScopeFiles::within(&project, &data.join("config"), &data),
            ApprovalStore::at(data.join("approvals.json")),
            Arc::new(CredentialStore::memory()),
        )
        .with_data_dir(&data)
        .with_path(None);
        let start = Instant::now();
        let plan = rt.block_on(installer.plan_bundle(&BundleInstall {
            path: bundle.clone(),
            local_name: None,
            scope: Scope::User,
        }));
        let planned = start.elapsed();
        let plan = match plan {
            Ok(p) => p,
            Err(e) => {
                eprintln!("harness9: {e}");
                return 1;
            }
        };
        let answers = Answers::new();
        let digest = match plan.fill(&answers) {
            Ok(f) => f.digest,
            Err(e) => {
                eprintln!("harness9: {e}");
                return 1;
            }
        };
        if let Err(e) = installer.commit(&plan, &answers, &digest) {
            eprintln!("harness9: {e}");
            return 1;
        }
        let total = start.elapsed();
        println!(
            "run {}: plan {:.0} ms, unpack and write {:.0} ms, total {:.0} ms",
            i + 1,
            ms(planned),
            ms(total - planned),
            ms(total)
        );
        totals.push(total);
        let _ = std::fs::remove_dir_all(&run_dir);
    }
    totals.sort();
    let median = totals.get(totals.len() / 2).copied().unwrap_or_default();
    println!(
        "median install of a {BUNDLE_MB} MB bundle: {:.0} ms",
        ms(median)
    );
    let _ = std::fs::remove_dir_all(&tmp);
    0
}

fn tempfile_dir() -> std::io::Result<std::path::PathBuf> {
    let mut r = [0u8; 8];
    let _ = getrandom::fill(&mut r);
    let hex: String = r.iter().map(|b| format!("{b:02x}")).collect();
    let dir = std::env::temp_dir().join(format!("harness9-bench-bundle-{hex}"));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

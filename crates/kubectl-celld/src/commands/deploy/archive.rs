//! The upload: a Worker directory as a tar archive, without `.git`, `node_modules` and what
//! `.celldignore` files list (gitignore syntax, one file per directory like `.gitignore`). A
//! symbolic link stays a link, and only one that points inside the directory is taken: celld
//! deploy reads what a link points to in the deploy pod, where a link to `/proc/self/environ` or
//! out of the tree would reach the pod's own files and credentials.

use crate::error::{Error, Result};
use ignore::WalkBuilder;
use std::path::{Path, PathBuf};

/// Name of the ignore files read in the directory and its subdirectories.
pub const IGNORE_FILE: &str = ".celldignore";
/// Entries never uploaded, at any depth.
pub const ALWAYS_SKIPPED: &[&str] = &[".git", "node_modules"];
/// Config files celld deploy reads, in its order of preference.
pub const WRANGLER_FILES: &[&str] = &["wrangler.jsonc", "wrangler.json"];

/// A directory packed for upload.
#[derive(Debug)]
pub struct Archive {
    /// The tar stream.
    pub bytes: Vec<u8>,
    /// Paths of the regular files in it, relative to the directory, sorted.
    pub files: Vec<String>,
}

/// Packs `dir`. Refuses a directory without a wrangler config at its top, since celld deploy
/// would fail on it after the deploy pod has started.
pub fn pack(dir: &Path) -> Result<Archive> {
    let io = |what: &'static str, path: &Path| {
        let path = path.to_path_buf();
        move |source| Error::Io { what, path, source }
    };
    let meta = std::fs::metadata(dir).map_err(io("cannot read the Worker directory", dir))?;
    if !meta.is_dir() {
        return Err(Error::Deploy(format!(
            "'{}' is not a directory: pass the Worker project directory (the one with wrangler.jsonc or wrangler.json), or use --image",
            dir.display()
        )));
    }
    let mut builder = tar::Builder::new(Vec::new());
    builder.mode(tar::HeaderMode::Deterministic);
    builder.follow_symlinks(false);
    let mut files = Vec::new();
    for entry in walk(dir) {
        let entry = entry.map_err(|e| {
            Error::Deploy(format!(
                "reading '{}' failed: {e}; fix the file permissions or list the path in {IGNORE_FILE}",
                dir.display()
            ))
        })?;
        let path = entry.path();
        let Ok(rel) = path.strip_prefix(dir) else {
            continue;
        };
        if rel.as_os_str().is_empty() {
            continue;
        }
        if entry.path_is_symlink() {
            refuse_outside_link(dir, rel)?;
        }
        let name = tar_name(rel);
        builder
            .append_path_with_name(path, &name)
            .map_err(io("cannot add to the upload", path))?;
        if entry.file_type().is_some_and(|t| t.is_file()) {
            files.push(name);
        }
    }
    let bytes = builder
        .into_inner()
        .map_err(io("cannot finish the upload of", dir))?;
    files.sort();
    if !WRANGLER_FILES.iter().any(|w| files.iter().any(|f| f == w)) {
        return Err(Error::Deploy(format!(
            "'{}' has no wrangler.jsonc or wrangler.json at its top: celld deploy needs one (wrangler.toml is not supported); pass the Worker project directory",
            dir.display()
        )));
    }
    Ok(Archive { bytes, files })
}

/// Refuses the link `rel` (under `dir`) when it points outside `dir`: to an absolute path, or
/// up past its top.
fn refuse_outside_link(dir: &Path, rel: &Path) -> Result<()> {
    let path = dir.join(rel);
    let target = std::fs::read_link(&path).map_err(|source| Error::Io {
        what: "cannot read the link",
        path: path.clone(),
        source,
    })?;
    if link_inside(rel, &target) {
        return Ok(());
    }
    Err(Error::Deploy(format!(
        "'{}' is a symbolic link to '{}', outside the Worker directory: celld deploy would read it in the deploy pod, where it reaches the pod's own files and credentials; copy what it points to into the directory, or remove the link",
        display(dir).join(rel).display(),
        target.display()
    )))
}

/// Whether a link at `rel` (relative to the directory's top) to `target` stays inside it.
fn link_inside(rel: &Path, target: &Path) -> bool {
    use std::path::Component;
    if target.is_absolute() {
        return false;
    }
    // Where the link lives, then each step of its target.
    let mut depth = rel.components().count().saturating_sub(1);
    for step in target.components() {
        match step {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir => {
                let Some(up) = depth.checked_sub(1) else {
                    return false;
                };
                depth = up;
            }
            Component::RootDir | Component::Prefix(_) => return false,
        }
    }
    true
}

fn walk(dir: &Path) -> ignore::Walk {
    let mut walk = WalkBuilder::new(dir);
    walk.standard_filters(false)
        .add_custom_ignore_filename(IGNORE_FILE)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|e| {
            let name = e.file_name().to_str().unwrap_or_default();
            !ALWAYS_SKIPPED.contains(&name) && name != IGNORE_FILE
        });
    walk.build()
}

/// A relative path with `/` separators, as tar stores it.
fn tar_name(rel: &Path) -> String {
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The directory shown in messages.
pub fn display(dir: &Path) -> PathBuf {
    std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn write(root: &Path, rel: &str, content: &str) {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, content).unwrap();
    }

    fn listing(bytes: &[u8]) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut ar = tar::Archive::new(bytes);
        for e in ar.entries().unwrap() {
            let mut e = e.unwrap();
            let path = e.path().unwrap().to_string_lossy().to_string();
            let mut s = String::new();
            if e.header().entry_type().is_file() {
                std::io::Read::read_to_string(&mut e, &mut s).unwrap();
            }
            out.push((path, s));
        }
        out
    }

    #[test]
    fn skips_git_node_modules_and_celldignore() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        write(root, "wrangler.jsonc", "{}");
        write(root, "src/index.ts", "export default {}");
        write(root, "src/util/math.ts", "export const x = 1");
        write(root, ".git/HEAD", "ref");
        write(root, "node_modules/dep/index.js", "x");
        write(root, "src/node_modules/nested.js", "x");
        write(root, ".celldignore", "*.log\n/dist/\nsecrets.env\n");
        write(root, "debug.log", "x");
        write(root, "dist/out.js", "x");
        write(root, "secrets.env", "x");
        write(root, "src/.celldignore", "generated/\n");
        write(root, "src/generated/big.ts", "x");
        write(root, ".env.example", "A=1");

        let a = pack(root).unwrap();
        assert_eq!(
            a.files,
            vec![
                ".env.example",
                "src/index.ts",
                "src/util/math.ts",
                "wrangler.jsonc"
            ]
        );
        let entries = listing(&a.bytes);
        let names: Vec<&str> = entries.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            vec![
                ".env.example",
                "src",
                "src/index.ts",
                "src/util",
                "src/util/math.ts",
                "wrangler.jsonc"
            ]
        );
        assert_eq!(entries[2].1, "export default {}");
    }

    #[test]
    fn refuses_a_directory_without_wrangler_config() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "wrangler.toml", "name = 'x'");
        let err = pack(d.path()).unwrap_err().to_string();
        assert!(err.contains("no wrangler.jsonc or wrangler.json"), "{err}");
        let err = pack(&d.path().join("missing")).unwrap_err().to_string();
        assert!(err.contains("cannot read the Worker directory"), "{err}");
    }

    #[test]
    fn a_link_inside_the_worker_is_kept_and_one_out_of_it_is_refused_by_name() {
        use std::os::unix::fs::symlink;
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        write(root, "wrangler.jsonc", "{}");
        write(root, "src/index.ts", "export default {}");
        symlink("index.ts", root.join("src/main.ts")).unwrap();
        symlink("../wrangler.jsonc", root.join("src/config.jsonc")).unwrap();
        let a = pack(root).unwrap();
        let names: Vec<String> = listing(&a.bytes).into_iter().map(|(n, _)| n).collect();
        assert!(names.contains(&"src/main.ts".to_string()), "{names:?}");

        for (name, target) in [
            ("src/env.ts", "/proc/self/environ"),
            ("src/up.ts", "../../outside.ts"),
            ("leak.ts", "../secrets"),
        ] {
            let d = tempfile::tempdir().unwrap();
            let root = d.path();
            write(root, "wrangler.jsonc", "{}");
            write(root, "src/index.ts", "export default {}");
            symlink(target, root.join(name)).unwrap();
            let err = pack(root).unwrap_err().to_string();
            assert!(
                err.contains(&format!(
                    "{name}' is a symbolic link to '{target}', outside the Worker directory"
                )),
                "{err}"
            );
        }
    }

    #[test]
    fn where_a_relative_link_leads() {
        let inside = |rel: &str, target: &str| link_inside(Path::new(rel), Path::new(target));
        assert!(inside("a.ts", "b.ts"));
        assert!(inside("src/a.ts", "../b.ts"));
        assert!(inside("src/x/a.ts", "../../b.ts"));
        assert!(inside("src/a.ts", "./lib/../b.ts"));
        assert!(!inside("a.ts", "../b.ts"));
        assert!(!inside("src/a.ts", "lib/../../../b.ts"));
        assert!(!inside("a.ts", "/etc/passwd"));
    }
}

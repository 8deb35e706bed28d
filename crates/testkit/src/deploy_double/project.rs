//! A Worker project as `celld deploy` reads it: `wrangler.jsonc`, else `wrangler.json` (never
//! `wrangler.toml`), with `name` and `main` and optionally `vars` (an object, published in the
//! manifest); unknown top-level keys are refused. The test double
//! does not bundle: every JavaScript, TypeScript and WebAssembly file of the project is a module,
//! uploaded as it is.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use super::error::DeployError;
use celld_bucket::vars::jsonc;

/// The config files, in the order they are looked for.
pub const CONFIG_FILES: &[&str] = &["wrangler.jsonc", "wrangler.json"];

/// The top-level keys the test double accepts (everything else is refused, as celld does).
pub const KNOWN_KEYS: &[&str] = &[
    "$schema",
    "name",
    "main",
    "compatibility_date",
    "compatibility_flags",
    "no_bundle",
    "vars",
];

/// File extensions uploaded as modules.
pub const MODULE_EXTENSIONS: &[&str] = &["js", "mjs", "cjs", "ts", "mts", "wasm"];

/// Directories never looked into (besides hidden ones).
const SKIPPED_DIRS: &[&str] = &["node_modules"];

/// Longest script name.
const MAX_NAME: usize = 63;

/// One module file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Module {
    /// Path relative to the project directory, with `/` separators.
    pub path: String,
    /// The file's contents.
    pub bytes: Vec<u8>,
}

/// What a deploy publishes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    /// The config file read (`wrangler.jsonc` or `wrangler.json`).
    pub config_file: PathBuf,
    /// The script name (`name`).
    pub name: String,
    /// The entry module (`main`), relative to the project directory.
    pub main: String,
    /// Every module, sorted by path.
    pub modules: Vec<Module>,
    /// The config's `vars`, when it has them.
    pub vars: Option<serde_json::Map<String, Value>>,
}

impl Project {
    /// The modules' total size in bytes.
    pub fn size(&self) -> u64 {
        self.modules.iter().map(|m| m.bytes.len() as u64).sum()
    }
}

/// Reads the project in `dir`.
pub fn read(dir: &Path) -> Result<Project, DeployError> {
    if !dir.is_dir() {
        return Err(DeployError::NotADirectory {
            dir: dir.to_path_buf(),
        });
    }
    let file = CONFIG_FILES
        .iter()
        .map(|name| dir.join(name))
        .find(|path| path.is_file())
        .ok_or_else(|| DeployError::NoConfig {
            dir: dir.to_path_buf(),
        })?;
    let text = std::fs::read_to_string(&file).map_err(|source| DeployError::Read {
        path: file.clone(),
        source,
    })?;
    let (name, main) = parse_config(&file, &text)?;
    let vars = parse_vars(&file, &text)?;
    let mut modules = Vec::new();
    collect(dir, dir, &mut modules)?;
    modules.sort_by(|a, b| a.path.cmp(&b.path));
    if modules.is_empty() {
        return Err(DeployError::NoModules {
            dir: dir.to_path_buf(),
        });
    }
    if !modules.iter().any(|m| m.path == main) {
        return Err(DeployError::Config {
            file,
            problem: format!(
                "\"main\" names {main:?}, which is not a module file of the project (.{} under the project directory); fix \"main\"",
                MODULE_EXTENSIONS.join(", .")
            ),
        });
    }
    Ok(Project {
        config_file: file,
        name,
        main,
        modules,
        vars,
    })
}

/// The `vars` object of a config file's text (already checked by [`parse_config`]).
pub fn parse_vars(
    file: &Path,
    text: &str,
) -> Result<Option<serde_json::Map<String, Value>>, DeployError> {
    let value: Value = serde_json::from_str(&jsonc::to_json(text)).map_err(|source| {
        DeployError::ConfigSyntax {
            file: file.to_path_buf(),
            source,
        }
    })?;
    match value.get("vars") {
        None => Ok(None),
        Some(Value::Object(vars)) => Ok(Some(vars.clone())),
        Some(_) => Err(DeployError::Config {
            file: file.to_path_buf(),
            problem: "\"vars\" must be an object of names and values".into(),
        }),
    }
}

/// The script name and entry module of a config file's text.
pub fn parse_config(file: &Path, text: &str) -> Result<(String, String), DeployError> {
    let problem = |problem: String| DeployError::Config {
        file: file.to_path_buf(),
        problem,
    };
    let value: Value = serde_json::from_str(&jsonc::to_json(text)).map_err(|source| {
        DeployError::ConfigSyntax {
            file: file.to_path_buf(),
            source,
        }
    })?;
    let Value::Object(map) = value else {
        return Err(problem(
            "the top level must be an object with \"name\" and \"main\"".into(),
        ));
    };
    let mut unknown: Vec<&str> = map
        .keys()
        .map(String::as_str)
        .filter(|k| !KNOWN_KEYS.contains(k))
        .collect();
    unknown.sort_unstable();
    if !unknown.is_empty() {
        return Err(problem(format!(
            "unknown top-level key{} {}: celld deploy supports only {}; remove {}",
            if unknown.len() == 1 { "" } else { "s" },
            quoted(&unknown),
            quoted(KNOWN_KEYS),
            if unknown.len() == 1 { "it" } else { "them" }
        )));
    }
    let string = |key: &str| match map.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.trim().to_string()),
        Some(_) => Err(problem(format!("\"{key}\" must be a non-empty string"))),
        None => Err(problem(format!("\"{key}\" is missing; add it"))),
    };
    let name = string("name")?;
    if name.len() > MAX_NAME
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(problem(format!(
            "\"name\" {name:?} must be 1 to {MAX_NAME} letters, digits, '-' or '_' (it becomes part of the bucket keys)"
        )));
    }
    let main = string("main")?;
    let main = normalize(&main).ok_or_else(|| {
        problem(format!(
            "\"main\" {main:?} must be a relative path inside the project directory"
        ))
    })?;
    Ok((name, main))
}

/// `path` relative, with `/` separators and without `.` components; `None` when it is absolute
/// or leaves the directory.
fn normalize(path: &str) -> Option<String> {
    let mut parts = Vec::new();
    for component in Path::new(path).components() {
        match component {
            Component::Normal(part) => parts.push(part.to_str()?.to_string()),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

fn quoted(keys: &[&str]) -> String {
    keys.iter()
        .map(|k| format!("\"{k}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<Module>) -> Result<(), DeployError> {
    let read_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| DeployError::Read { path, source }
    };
    let entries = std::fs::read_dir(dir).map_err(read_err(dir))?;
    for entry in entries {
        let entry = entry.map_err(read_err(dir))?;
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') {
            continue;
        }
        let kind = entry.file_type().map_err(read_err(&path))?;
        if kind.is_dir() {
            if !SKIPPED_DIRS.contains(&name.as_ref()) {
                collect(root, &path, out)?;
            }
            continue;
        }
        let is_module = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| MODULE_EXTENSIONS.contains(&e));
        // Symbolic links to files count (their target is read); links to directories do not.
        if !is_module || !path.is_file() {
            continue;
        }
        let Some(rel) = path
            .strip_prefix(root)
            .ok()
            .and_then(|p| normalize(&p.to_string_lossy()))
        else {
            continue;
        };
        let bytes = std::fs::read(&path).map_err(read_err(&path))?;
        out.push(Module { path: rel, bytes });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn reads_jsonc_and_every_module_sorted() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(
            root,
            "wrangler.jsonc",
            "// c\n{ \"name\": \"hello\", \"main\": \"./src/index.js\", \"compatibility_date\": \"2025-01-01\", }\n",
        );
        write(root, "wrangler.json", "{ \"name\": \"ignored\" }");
        write(root, "src/index.js", "import './b.js';");
        write(root, "src/b.js", "export {};");
        write(root, "src/lib/c.ts", "export {};");
        write(root, "README.md", "# no");
        write(root, "node_modules/x/index.js", "no");
        write(root, ".git/hooks/a.js", "no");
        let project = read(root).unwrap();
        assert_eq!(project.name, "hello");
        assert_eq!(project.main, "src/index.js");
        assert_eq!(project.config_file, root.join("wrangler.jsonc"));
        let paths: Vec<&str> = project.modules.iter().map(|m| m.path.as_str()).collect();
        assert_eq!(paths, ["src/b.js", "src/index.js", "src/lib/c.ts"]);
        assert_eq!(project.size(), 16 + 10 + 10);
        assert_eq!(project.vars, None);
    }

    #[test]
    fn reads_vars() {
        let file = Path::new("wrangler.json");
        let vars = parse_vars(file, r#"{"vars": {"A": "1", "B": {"c": 2}}}"#).unwrap();
        assert_eq!(
            serde_json::Value::Object(vars.unwrap()),
            serde_json::json!({"A": "1", "B": {"c": 2}})
        );
        let err = parse_vars(file, r#"{"vars": ["A"]}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"vars\" must be an object"), "{err}");
    }

    #[test]
    fn falls_back_to_wrangler_json_and_refuses_toml_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "wrangler.toml", "name = 'x'");
        write(root, "index.js", "export {};");
        let err = read(root).unwrap_err().to_string();
        assert!(err.contains("no wrangler.jsonc or wrangler.json"), "{err}");
        write(
            root,
            "wrangler.json",
            "{\"name\": \"x\", \"main\": \"index.js\"}",
        );
        assert_eq!(read(root).unwrap().name, "x");
    }

    #[test]
    fn refuses_unknown_keys_naming_them() {
        let err = parse_config(
            Path::new("wrangler.jsonc"),
            r#"{"name": "x", "main": "a.js", "kv_namespaces": [], "routes": []}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("wrangler.jsonc: unknown top-level keys \"kv_namespaces\", \"routes\": celld deploy supports only \"$schema\", \"name\""),
            "{err}"
        );
    }

    #[test]
    fn refuses_bad_name_and_main() {
        let file = Path::new("wrangler.json");
        for (text, want) in [
            (r#"{"main": "a.js"}"#, "\"name\" is missing"),
            (r#"{"name": "a b", "main": "a.js"}"#, "letters, digits"),
            (
                r#"{"name": "a", "main": "../a.js"}"#,
                "relative path inside",
            ),
            (
                r#"{"name": "a", "main": 3}"#,
                "\"main\" must be a non-empty string",
            ),
            ("[]", "top level must be an object"),
        ] {
            let err = parse_config(file, text).unwrap_err().to_string();
            assert!(err.contains(want), "{text}: {err}");
        }
        let err = parse_config(file, "{\n\"name\": x}")
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 2"), "{err}");
    }

    #[test]
    fn main_must_be_a_module() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(
            root,
            "wrangler.json",
            r#"{"name": "x", "main": "src/missing.js"}"#,
        );
        write(root, "src/index.js", "export {};");
        let err = read(root).unwrap_err().to_string();
        assert!(
            err.contains("\"src/missing.js\", which is not a module file"),
            "{err}"
        );
    }
}

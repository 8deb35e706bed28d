//! The version id of a deploy: 16 hex digits of a SHA-256 over the script name, the entry
//! module, every module's path and contents and the config's `vars` (when it has them). The same sources give the same version; any
//! change to a module gives another.

use sha2::{Digest, Sha256};

use super::project::Project;

/// Domain separator, so the hash is never mistaken for one of another format.
const DOMAIN: &[u8] = b"celld-deploy-double/version/1\0";

/// The project's version id (16 lowercase hex digits).
pub fn of(project: &Project) -> String {
    let mut hash = Sha256::new();
    hash.update(DOMAIN);
    for field in [&project.name, &project.main] {
        hash.update(field.as_bytes());
        hash.update([0]);
    }
    for module in &project.modules {
        hash.update(module.path.as_bytes());
        hash.update([0]);
        hash.update((module.bytes.len() as u64).to_le_bytes());
        hash.update(&module.bytes);
    }
    if let Some(vars) = &project.vars {
        hash.update(b"vars\0");
        hash.update(
            serde_json::Value::Object(vars.clone())
                .to_string()
                .as_bytes(),
        );
    }
    let digest = hex::encode(hash.finalize());
    digest[..16].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deploy_double::project::Module;
    use std::path::PathBuf;

    fn project(modules: &[(&str, &str)]) -> Project {
        Project {
            config_file: PathBuf::from("wrangler.jsonc"),
            name: "hello".into(),
            main: "index.js".into(),
            modules: modules
                .iter()
                .map(|(p, b)| Module {
                    path: (*p).into(),
                    bytes: b.as_bytes().to_vec(),
                })
                .collect(),
            vars: None,
        }
    }

    #[test]
    fn same_sources_same_version_any_change_another() {
        let a = of(&project(&[("index.js", "a"), ("lib.js", "b")]));
        assert_eq!(a.len(), 16);
        assert!(
            a.chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        assert_eq!(a, of(&project(&[("index.js", "a"), ("lib.js", "b")])));
        assert_ne!(a, of(&project(&[("index.js", "a"), ("lib.js", "c")])));
        assert_ne!(a, of(&project(&[("index.js", "a"), ("lib2.js", "b")])));
        // Contents moving across the boundary of two files change the version too.
        assert_ne!(
            of(&project(&[("a.js", "xy"), ("b.js", "")])),
            of(&project(&[("a.js", "x"), ("b.js", "y")]))
        );
        let mut with_vars = project(&[("index.js", "a"), ("lib.js", "b")]);
        with_vars.vars = Some(serde_json::Map::from_iter([("A".to_string(), "1".into())]));
        assert_ne!(a, of(&with_vars));
        let mut renamed = project(&[("index.js", "a"), ("lib.js", "b")]);
        renamed.name = "other".into();
        assert_ne!(a, of(&renamed));
    }
}

//! `celld-manifests DIR`: writes the generated manifests under DIR (the repository's `config/`):
//! the CRDs from the API types, the operator's RBAC from the rules it uses, the image tag of
//! `config/default`, and `DIR/../install-operator.yaml` (everything in one file, image pinned to
//! `VERSION`), and the field reference in `DIR/../docs/reference.md`.

use celld_manifests::error::Error;
use celld_manifests::{generated, reference};
use std::path::PathBuf;

fn main() -> Result<(), Error> {
    let dir = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .ok_or(Error::Usage)?;
    for (path, content) in generated()? {
        let path = dir.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| Error::Write {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        std::fs::write(&path, content).map_err(|source| Error::Write {
            path: path.clone(),
            source,
        })?;
        println!("wrote {}", path.display());
    }
    let readme = dir.join("../docs/reference.md");
    let text = std::fs::read_to_string(&readme).map_err(|source| Error::Read {
        path: readme.clone(),
        source,
    })?;
    let spliced =
        reference::splice(&text).ok_or_else(|| Error::ReferenceMarkers(readme.clone()))?;
    if spliced != text {
        std::fs::write(&readme, spliced).map_err(|source| Error::Write {
            path: readme.clone(),
            source,
        })?;
        println!("wrote the field reference into {}", readme.display());
    }
    Ok(())
}

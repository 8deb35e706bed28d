//! `celld-manifests DIR`: writes the generated manifests under DIR (the repository's `config/`):
//! the CRDs from the API types, the operator's RBAC from the rules it uses, the image tag of
//! `config/default`, and `DIR/../install-operator.yaml` (everything in one file, image pinned to
//! `VERSION`).

use celld_manifests::{Error, generated};
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
    Ok(())
}

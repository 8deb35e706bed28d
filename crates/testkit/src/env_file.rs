//! The `KEY=value` env files up.sh writes for the components it starts (`.testenv/*.env`).

use std::path::Path;

use crate::error::{Error, Result};

/// The settings of the env file at `path`, by key, each failing with
/// [`Error::EmulatorSetting`] when the file has no such key; `missing` is the error when the
/// file does not exist (the control plane is not up, or runs without that component).
pub(crate) fn read(
    path: &Path,
    missing: Error,
) -> Result<impl Fn(&'static str) -> Result<String> + use<>> {
    if !path.exists() {
        return Err(missing);
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::io("reading the control plane's settings", path, e))?;
    let path = path.to_path_buf();
    Ok(move |key: &'static str| {
        text.lines()
            .filter_map(|line| line.trim().split_once('='))
            .find(|(k, _)| k.trim() == key)
            .map(|(_, v)| v.trim().trim_matches('"').to_owned())
            .ok_or_else(|| Error::EmulatorSetting {
                path: path.clone(),
                key,
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::unique_name;

    #[test]
    fn keys_are_read_unquoted_and_a_missing_file_or_key_says_so() {
        let dir = std::env::temp_dir().join(unique_name("celld-testkit-env"));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join("x.env");
        let missing = read(&file, Error::NotRunning { path: file.clone() })
            .err()
            .expect("no file yet");
        assert!(matches!(missing, Error::NotRunning { .. }), "{missing}");
        std::fs::write(&file, "A=1\n B = \"two\" \n").expect("write");
        let get = read(&file, Error::NotRunning { path: file.clone() }).expect("read");
        assert_eq!(
            (get("A").expect("A"), get("B").expect("B")),
            ("1".into(), "two".into())
        );
        let e = get("C").expect_err("no C");
        assert!(matches!(e, Error::EmulatorSetting { key: "C", .. }), "{e}");
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }
}

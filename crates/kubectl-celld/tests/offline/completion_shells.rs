//! Dynamic completion through each shell's own protocol, with the built binary: the bash script
//! `completion bash` prints, run by bash as at a Tab; the command lines the zsh and fish scripts
//! run (those shells need not be installed); and `kubectl_complete-celld`. Contexts come from
//! the kubeconfig as it is at the Tab, so no cluster is needed.

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-celld");

/// A kubeconfig with three contexts.
fn kubeconfig(dir: &Path) -> PathBuf {
    let path = dir.join("config");
    let mut text = String::from(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'http://127.0.0.1:1'}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n",
    );
    for name in ["dev", "prod-eu", "prod-us"] {
        text.push_str(&format!(
            "- name: {name}\n  context: {{cluster: c, user: u}}\n"
        ));
    }
    text.push_str("current-context: dev\n");
    std::fs::write(&path, text).unwrap();
    path
}

/// A command with the binary's directory first on PATH (the scripts run `kubectl-celld` by
/// name) and `config` as the kubeconfig.
fn command(program: &str, config: &Path) -> Command {
    let dir = Path::new(BIN).parent().unwrap();
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut c = Command::new(program);
    c.env("PATH", path).env("KUBECONFIG", config);
    c
}

fn stdout(c: &mut Command) -> String {
    let out = c.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The values of the candidates, whatever follows them (`:description`, `\tdescription`).
fn values(text: &str, separator: char) -> Vec<String> {
    text.split(separator)
        .filter(|l| !l.is_empty())
        .map(|l| l.split([':', '\t']).next().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn bash_runs_the_registration_script_and_completes_contexts() {
    let dir = tempfile::tempdir().unwrap();
    let config = kubeconfig(dir.path());
    // What bash does at `kubectl-celld status --context prod<Tab>`: the completion function
    // registered by the script, called with the command, the current and the previous word.
    let script = r#"
source <(kubectl-celld completion bash)
COMP_WORDS=(kubectl-celld status --context prod)
COMP_CWORD=3
COMP_TYPE=9
_clap_complete_kubectl_celld kubectl-celld prod --context
printf '%s\n' "${COMPREPLY[@]}"
"#;
    let out = stdout(command("bash", &config).args(["-c", script]));
    assert_eq!(values(&out, '\n'), ["prod-eu", "prod-us"], "{out}");
    // Subcommands come from the same engine.
    let script = r#"
source <(kubectl-celld completion bash)
COMP_WORDS=(kubectl-celld roll)
COMP_CWORD=1
COMP_TYPE=9
_clap_complete_kubectl_celld kubectl-celld roll kubectl-celld
printf '%s\n' "${COMPREPLY[@]}"
"#;
    let out = stdout(command("bash", &config).args(["-c", script]));
    assert_eq!(values(&out, '\n'), ["rollback", "rollout"], "{out}");
}

#[test]
fn zsh_and_fish_command_lines_complete_contexts() {
    let dir = tempfile::tempdir().unwrap();
    let config = kubeconfig(dir.path());
    let words = ["kubectl-celld", "status", "--context", "prod"];
    // zsh: `_CLAP_COMPLETE_INDEX=$(expr $CURRENT - 1) COMPLETE=zsh kubectl-celld -- $words`.
    let out = stdout(
        command("kubectl-celld", &config)
            .env("COMPLETE", "zsh")
            .env("_CLAP_IFS", "\n")
            .env("_CLAP_COMPLETE_INDEX", "3")
            .arg("--")
            .args(words),
    );
    assert_eq!(values(&out, '\n'), ["prod-eu", "prod-us"], "{out}");
    // fish: the tokens before the cursor, then the current token, after `--`.
    let out = stdout(
        command("kubectl-celld", &config)
            .env("COMPLETE", "fish")
            .arg("--")
            .args(words),
    );
    assert_eq!(values(&out, '\n'), ["prod-eu", "prod-us"], "{out}");
}

#[test]
fn kubectl_complete_link_completes_contexts() {
    let dir = tempfile::tempdir().unwrap();
    let config = kubeconfig(dir.path());
    let link = dir.path().join("kubectl_complete-celld");
    std::os::unix::fs::symlink(BIN, &link).unwrap();
    let out =
        stdout(command(link.to_str().unwrap(), &config).args(["status", "--context", "prod-"]));
    assert_eq!(out, "prod-eu\nprod-us\n:4\n");
}

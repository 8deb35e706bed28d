//! The GitHub Actions workflow docs/previews.md shows under "Previews from CI": a preview per
//! pull request, created or updated at each push and deleted when the pull request closes. Every
//! `kubectl celld` command its steps run parses with the plugin's own flags, once the workflow's
//! `env` and expressions are expanded as the runner would for pull request 123.

use clap::Parser;
use kubectl_celld::cli::{Cli, Command};
use kubectl_celld::commands::preview::PreviewCommand;
use serde_yaml::Value;
use std::collections::BTreeMap;

const DOC: &str = include_str!("../../../../docs/previews.md");

/// The workflow: the first YAML block of the section.
fn workflow() -> Value {
    let section = DOC
        .split_once("## Previews from CI")
        .expect("docs/previews.md has a section 'Previews from CI'")
        .1;
    let block = section
        .split_once("```yaml\n")
        .and_then(|(_, rest)| rest.split_once("\n```"))
        .expect("the section shows a ```yaml block")
        .0;
    serde_yaml::from_str(block).expect("the workflow is YAML")
}

/// `text` with each `${{ expression }}` as the runner expands it for pull request 123.
fn expressions(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some((before, after)) = rest.split_once("${{") {
        let (expr, tail) = after.split_once("}}").expect("a closed ${{ }}");
        out.push_str(before);
        out.push_str(match expr.trim() {
            "github.event.pull_request.number" => "123",
            other => panic!("an expression this test does not know: {other}"),
        });
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// The words of the shell command that starts `text`, up to its end (`;`, `&&`, `|`, `)`, a
/// redirection or the end of the line), quotes removed and `$VAR` expanded from `env`.
fn shell_words(text: &str, env: &BTreeMap<String, String>) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, ' ' | '\t') => words.extend(word.take()),
            (None, '\n' | ';' | '&' | '|' | ')' | '>' | '<') => break,
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_default();
            }
            (Some(q), c) if c == q => quote = None,
            (None | Some('"'), '$') => {
                let braced = chars.next_if_eq(&'{').is_some();
                let mut name = String::new();
                while let Some(n) = chars.next_if(|n| n.is_ascii_alphanumeric() || *n == '_') {
                    name.push(n);
                }
                if braced {
                    assert_eq!(chars.next(), Some('}'), "an unclosed ${{{name}");
                }
                let value = env
                    .get(&name)
                    .unwrap_or_else(|| panic!("${name} is not in the workflow's env"));
                word.get_or_insert_default().push_str(value);
            }
            (_, c) => word.get_or_insert_default().push(c),
        }
    }
    words.extend(word);
    words
}

/// The `kubectl celld` commands of the `run:` scripts of job `job`, as argument lists.
fn plugin_commands(workflow: &Value, job: &str) -> Vec<Vec<String>> {
    let env: BTreeMap<String, String> = workflow["env"]
        .as_mapping()
        .expect("the workflow has env")
        .iter()
        .map(|(k, v)| {
            let value = match v {
                Value::String(s) => s.clone(),
                other => serde_yaml::to_string(other).unwrap().trim().to_string(),
            };
            (k.as_str().unwrap().to_string(), expressions(&value))
        })
        .collect();
    let steps = workflow["jobs"][job]["steps"]
        .as_sequence()
        .unwrap_or_else(|| panic!("job {job} has steps"));
    let mut commands = Vec::new();
    for script in steps.iter().filter_map(|s| s["run"].as_str()) {
        let mut rest = script;
        while let Some((_, after)) = rest.split_once("kubectl celld ") {
            commands.push(shell_words(after, &env));
            rest = after;
        }
    }
    commands
}

fn parse(words: &[String]) -> PreviewCommand {
    let cli = Cli::try_parse_from(
        std::iter::once("kubectl-celld").chain(words.iter().map(String::as_str)),
    )
    .unwrap_or_else(|e| panic!("kubectl celld {} does not parse:\n{e}", words.join(" ")));
    match cli.command {
        Command::Preview(p) => p.command,
        other => panic!("not a preview command: {other:?}"),
    }
}

#[test]
fn the_ci_workflow_runs_on_every_pull_request_event_it_needs() {
    let w = workflow();
    let types: Vec<&str> = w["on"]["pull_request"]["types"]
        .as_sequence()
        .expect("pull_request types")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for needed in ["opened", "reopened", "synchronize", "closed"] {
        assert!(types.contains(&needed), "no {needed} in {types:?}");
    }
    assert_eq!(
        w["jobs"]["deploy"]["if"].as_str(),
        Some("github.event.action != 'closed'")
    );
    assert_eq!(
        w["jobs"]["delete"]["if"].as_str(),
        Some("github.event.action == 'closed'")
    );
    // The deployment's URL is the one the create step found.
    assert_eq!(
        w["jobs"]["deploy"]["environment"]["url"].as_str(),
        Some("${{ steps.preview.outputs.url }}")
    );
    let steps = w["jobs"]["deploy"]["steps"].as_sequence().unwrap();
    assert!(steps.iter().any(|s| s["id"].as_str() == Some("preview")));
}

#[test]
fn the_ci_workflow_creates_pr_n_and_deletes_it_when_the_pull_request_closes() {
    let w = workflow();
    let deploy = plugin_commands(&w, "deploy");
    assert_eq!(deploy.len(), 2, "{deploy:?}");
    let PreviewCommand::Create(create) = parse(&deploy[0]) else {
        panic!("the deploy job does not create first: {:?}", deploy[0])
    };
    assert_eq!(
        (create.name.as_str(), create.fleet.as_str()),
        ("pr-123", "web")
    );
    assert!(create.wait, "{:?}", deploy[0]);
    assert!(create.dir.is_some());
    let PreviewCommand::Status(status) = parse(&deploy[1]) else {
        panic!("the URL does not come from status: {:?}", deploy[1])
    };
    assert_eq!(status.name, "pr-123");

    let delete = plugin_commands(&w, "delete");
    assert_eq!(delete.len(), 1, "{delete:?}");
    let PreviewCommand::Delete(d) = parse(&delete[0]) else {
        panic!("the delete job does not delete: {:?}", delete[0])
    };
    assert_eq!(d.name, "pr-123");
    assert!(d.wait && d.ignore_not_found);
}

#[test]
fn shell_words_follow_quotes_and_expand_the_env() {
    let env = BTreeMap::from([("P".to_string(), "pr-1".to_string())]);
    assert_eq!(
        shell_words(
            r#"preview status "$P" -o jsonpath='{.url}')" >> "$GITHUB_OUTPUT""#,
            &env
        ),
        ["preview", "status", "pr-1", "-o", "jsonpath={.url}"]
    );
    assert_eq!(
        shell_words("delete ${P} --wait\nnext line", &env),
        ["delete", "pr-1", "--wait"]
    );
}

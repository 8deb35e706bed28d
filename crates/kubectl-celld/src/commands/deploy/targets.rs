//! Which fleets a deploy goes to: the one of `--fleet`, or the fleets of a fan-out, named with
//! `--fleets` (NAME in the namespace of `-n`, or NAMESPACE/NAME) or matched by `--selector`
//! (in the namespace, or with `-A` in every namespace); or, with `--waves`, the rollout the
//! operator ships to the fleets `--selector` matches.

use super::args::{DeployArgs, fleet_flag, source_word};
use super::rollout::body::{self, Request};
use super::rollout::waves::Waves;
use crate::cluster::fleets;
use crate::cluster::kubeconfig::Target;
use crate::error::rollout::RolloutError;
use crate::error::{Error, Result};

/// How the fleets were named.
#[derive(Debug, Clone, PartialEq)]
pub enum Selection {
    /// `--fleet NAME`: one fleet, the single deploy.
    One(String),
    /// `--fleets` or `--selector`: a fan-out.
    FanOut(FanOut),
    /// `--selector` with `--waves`: a rollout.
    Rollout(Box<Request>),
}

/// The fleets of a fan-out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FanOut {
    /// `--fleets a,b,ns/c`: these fleets, as given.
    Named(Vec<FleetRef>),
    /// `--selector SELECTOR`: the fleets whose labels match, in the namespace or in all.
    Selector {
        /// The label selector.
        selector: String,
        /// `-A`: in every namespace.
        all_namespaces: bool,
    },
}

/// A fleet named in `--fleets`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetRef {
    /// The namespace given (`NAMESPACE/NAME`), else the one of `-n`.
    pub namespace: Option<String>,
    /// The fleet's name.
    pub name: String,
}

/// A fleet a fan-out deploys to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct FleetId {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
}

impl std::fmt::Display for FleetId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// The rollout `--selector`, `--waves` and `--image` describe; a deploy of a local build is
/// refused, saying how to ship it as an image.
pub fn rollout(args: &DeployArgs, waves: &Waves) -> Result<Request> {
    let selector_text = args.selector.clone().unwrap_or_default();
    let Some(image) = args.image.clone() else {
        return Err(RolloutError::NeedsImage {
            dir: args
                .dir
                .as_ref()
                .map_or_else(|| "DIR".to_string(), |d| d.display().to_string()),
            selector: selector_text,
            waves: waves.text.clone(),
            deployer: celld_api::contract::deployer::pinned(
                celld_api::contract::deployer::DEFAULT_DEPLOYER_IMAGE,
            ),
        }
        .into());
    };
    let selector = crate::text::label_selector::parse(&selector_text)
        .map_err(|e| Error::Usage(format!("--selector: {e}")))?;
    let name = match &args.name {
        Some(name) => name.clone(),
        None => body::name_from_image(&image).ok_or_else(|| {
            Error::Usage(format!(
                "cannot make a rollout name from the image '{image}': name the rollout with --name NAME"
            ))
        })?,
    };
    Ok(Request {
        name,
        image,
        layout: args.image_layout,
        selector_text,
        selector,
        waves: waves.clone(),
        bake: args.bake.clone(),
    })
}

/// The selection the flags make (clap has already refused flags given together).
pub fn selection(args: &DeployArgs) -> Result<Selection> {
    if let Some(waves) = &args.waves {
        return rollout(args, waves).map(|r| Selection::Rollout(Box::new(r)));
    }
    let fan_out = !args.fleets.is_empty() || args.selector.is_some();
    if fan_out && let Some(stray) = &args.stray_fleet {
        return Err(Error::Usage(format!(
            "unexpected argument '{stray}': the fleets of a fan-out are named with --fleets or --selector; did you mean --fleets {stray}? (kubectl celld deploy {} --fleets {stray})",
            source_word(args)
        )));
    }
    match &args.selector {
        Some(selector) if selector.trim().is_empty() => Err(Error::Usage(
            "--selector is empty: give a label selector such as team=payments".to_string(),
        )),
        Some(selector) => Ok(Selection::FanOut(FanOut::Selector {
            selector: selector.trim().to_string(),
            all_namespaces: args.all_namespaces,
        })),
        None if fan_out => Ok(Selection::FanOut(FanOut::Named(parse_names(&args.fleets)?))),
        None => Ok(Selection::One(fleet_flag(args)?)),
    }
}

/// The entries of `--fleets`: `NAME` or `NAMESPACE/NAME`.
pub fn parse_names(entries: &[String]) -> Result<Vec<FleetRef>> {
    entries
        .iter()
        .map(|entry| {
            let entry = entry.trim();
            let bad = |why: &str| {
                Error::Usage(format!(
                    "--fleets entry '{entry}' {why}: give NAME (in the namespace of -n) or NAMESPACE/NAME, separated by commas"
                ))
            };
            match entry.split('/').collect::<Vec<_>>().as_slice() {
                [""] => Err(bad("is empty")),
                [name] => Ok(FleetRef {
                    namespace: None,
                    name: name.to_string(),
                }),
                [ns, name] if !ns.is_empty() && !name.is_empty() => Ok(FleetRef {
                    namespace: Some(ns.to_string()),
                    name: name.to_string(),
                }),
                _ => Err(bad("is not a fleet name")),
            }
        })
        .collect()
}

/// The fleets of `--fleets`, with `namespace` (the one of `-n`) where none is given, in the
/// order given; a fleet named twice is refused.
pub fn resolve(refs: &[FleetRef], namespace: &str) -> Result<Vec<FleetId>> {
    let mut out: Vec<FleetId> = Vec::with_capacity(refs.len());
    for r in refs {
        let id = FleetId {
            namespace: r.namespace.clone().unwrap_or_else(|| namespace.to_string()),
            name: r.name.clone(),
        };
        if out.contains(&id) {
            return Err(Error::Usage(format!(
                "--fleets names fleet {id} twice: name each fleet once"
            )));
        }
        out.push(id);
    }
    Ok(out)
}

/// The fleets a fan-out deploys to: as named, or sorted by namespace and name for a selector. A selector
/// that matches no fleet is an error naming it.
pub async fn list(target: &Target, fan_out: &FanOut) -> Result<Vec<FleetId>> {
    match fan_out {
        FanOut::Named(refs) => resolve(refs, &target.namespace),
        FanOut::Selector {
            selector,
            all_namespaces,
        } => {
            let ns = (!all_namespaces).then_some(target.namespace.as_str());
            let found = fleets::list_selected(target, ns, Some(selector)).await?;
            if found.is_empty() {
                return Err(Error::NoFleetsMatch {
                    selector: selector.clone(),
                    namespace: ns.map(str::to_string),
                });
            }
            Ok(found
                .iter()
                .map(|f| FleetId {
                    namespace: f
                        .metadata
                        .namespace
                        .clone()
                        .unwrap_or_else(|| target.namespace.clone()),
                    name: f.metadata.name.clone().unwrap_or_default(),
                })
                .collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn args(line: &[&str]) -> DeployArgs {
        let cli = Cli::try_parse_from(
            ["kubectl-celld", "deploy"]
                .into_iter()
                .chain(line.iter().copied()),
        )
        .unwrap();
        match cli.command {
            Command::Deploy(d) => *d,
            other => panic!("not deploy: {other:?}"),
        }
    }

    fn named(ns: Option<&str>, name: &str) -> FleetRef {
        FleetRef {
            namespace: ns.map(str::to_string),
            name: name.to_string(),
        }
    }

    #[test]
    fn each_flag_makes_its_selection() {
        assert_eq!(
            selection(&args(&["./w", "--fleet", "web"])).unwrap(),
            Selection::One("web".into())
        );
        assert_eq!(
            selection(&args(&["./w", "--fleets", "pay-eu,billing/pay-us"])).unwrap(),
            Selection::FanOut(FanOut::Named(vec![
                named(None, "pay-eu"),
                named(Some("billing"), "pay-us")
            ]))
        );
        assert_eq!(
            selection(&args(&["./w", "--fleets", "a", "--fleets", "b"])).unwrap(),
            Selection::FanOut(FanOut::Named(vec![named(None, "a"), named(None, "b")]))
        );
        assert_eq!(
            selection(&args(&["./w", "-l", "team=payments", "-A"])).unwrap(),
            Selection::FanOut(FanOut::Selector {
                selector: "team=payments".into(),
                all_namespaces: true
            })
        );
        assert_eq!(
            selection(&args(&["--image", "src:1", "--selector", " tier!=canary "])).unwrap(),
            Selection::FanOut(FanOut::Selector {
                selector: "tier!=canary".into(),
                all_namespaces: false
            })
        );
    }

    #[test]
    fn a_stray_fleet_or_an_empty_selector_is_refused_with_the_way_to_say_it() {
        let e = selection(&args(&["./w", "pay-eu", "--fleets", "pay-us"])).unwrap_err();
        insta::assert_snapshot!(e.to_string(), @"unexpected argument 'pay-eu': the fleets of a fan-out are named with --fleets or --selector; did you mean --fleets pay-eu? (kubectl celld deploy ./w --fleets pay-eu)");
        assert_eq!(e.exit_code(), 2);
        let e = selection(&args(&["./w", "--selector", ""])).unwrap_err();
        insta::assert_snapshot!(e.to_string(), @"--selector is empty: give a label selector such as team=payments");
    }

    #[test]
    fn fleet_names_are_name_or_namespace_slash_name() {
        let parsed = parse_names(&["web".into(), " apps/api ".into()]).unwrap();
        assert_eq!(parsed, vec![named(None, "web"), named(Some("apps"), "api")]);
        for bad in ["", "a/b/c", "/web", "apps/"] {
            let e = parse_names(&[bad.to_string()]).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad}");
            assert!(e.to_string().contains("NAMESPACE/NAME"), "{bad}: {e}");
        }
    }

    #[test]
    fn names_without_a_namespace_take_the_one_of_dash_n_and_count_once() {
        let ids = resolve(&[named(None, "web"), named(Some("billing"), "web")], "apps").unwrap();
        assert_eq!(
            ids.iter().map(ToString::to_string).collect::<Vec<_>>(),
            ["apps/web", "billing/web"]
        );
        let e = resolve(&[named(None, "web"), named(Some("apps"), "web")], "apps").unwrap_err();
        insta::assert_snapshot!(e.to_string(), @"--fleets names fleet apps/web twice: name each fleet once");
    }
}

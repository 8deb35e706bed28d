//! What can stop a `rollout` command or a `deploy --waves`: a rollout that does not exist, a
//! cluster whose operator predates rollouts, a rollout that ended, a deploy of a local build,
//! and a refusal of the API server. Each message names the rollout and what to do.

/// A `rollout` command, or `deploy --waves`, could not go on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RolloutError {
    /// The named rollout does not exist.
    #[error("{}", not_found(.name, .namespace, .near))]
    NotFound {
        /// The name asked for.
        name: String,
        /// The namespace looked in.
        namespace: String,
        /// Rollouts of that namespace with similar names.
        near: Vec<String>,
    },

    /// The cluster has the fleets' CRD but not the rollouts': its operator predates them.
    #[error(
        "this cluster's celld operator is too old for rollouts: the API server knows celldfleets.platform.celld.dev but not celldrollouts.platform.celld.dev; upgrade the operator and its CRDs with: kubectl apply --server-side -f {manifest}, or check --context"
    )]
    NotInstalled {
        /// The release manifest that installs them.
        manifest: String,
    },

    /// `deploy --waves` without `--image`: a rollout cannot ship a local build.
    #[error(
        "a rollout ships an image or a Flux source, not a local build: the operator publishes the revision to each fleet, wave after wave, from deploy Jobs of its own, so the Worker must be in an image the cluster can pull. Build {dir} into an image as deploy --image takes it, the deployer with the project at /app (a Dockerfile in {dir} with the two lines 'FROM {deployer}' and 'COPY --chown=65532:65532 . /app/', then: docker build -t REGISTRY/NAME:TAG {dir} && docker push REGISTRY/NAME:TAG), and pass it pinned by digest: kubectl celld deploy --selector {sel} --waves {waves} --image REGISTRY/NAME:TAG@sha256:DIGEST (a CelldRollout written by hand can also follow a Flux source: spec.source.sourceRef). To write every selected fleet at once from {dir} instead, without waves: kubectl celld deploy {dir} --selector {sel}. Nothing was created",
        sel = shell_word(.selector)
    )]
    NeedsImage {
        /// The directory given, or `DIR`.
        dir: String,
        /// `--selector` as given.
        selector: String,
        /// `--waves` as given.
        waves: String,
        /// The deployer image to build on.
        deployer: String,
    },

    /// The rollout built from the flags would ship to no fleet.
    #[error(
        "CelldRollout {namespace}/{name} would ship to no fleet: {why}; list the fleets with their labels with: kubectl get celldfleets -n {namespace} --show-labels, then fix --selector. Nothing was created"
    )]
    NothingToShip {
        /// The rollout.
        name: String,
        /// Its namespace.
        namespace: String,
        /// Why: no fleet matches, or every match is skipped.
        why: String,
    },

    /// The API server refused the rollout (its CRD's rules): its message names the field.
    #[error("the API server refused CelldRollout {namespace}/{name}: {message}")]
    Refused {
        /// The rollout.
        name: String,
        /// Its namespace.
        namespace: String,
        /// The API server's message.
        message: String,
    },

    /// Another field manager (a GitOps tool, kubectl) owns fields the apply sets.
    #[error(
        "CelldRollout {namespace}/{name} exists and another field manager owns fields this deploy would change ({message}): it is likely managed from git; change it there, or pick another name with --name. Nothing was changed"
    )]
    Conflict {
        /// The rollout.
        name: String,
        /// Its namespace.
        namespace: String,
        /// The API server's message, naming the manager and the fields.
        message: String,
    },

    /// `promote` or `abort` of a rollout that has ended for its revision.
    #[error(
        "CelldRollout {namespace}/{name} has ended ({phase}) for its revision {revision}, so there is nothing to {verb}: only a new revision starts it again (a new image, a new artifact of its Flux source, or a new value of the annotation platform.celld.dev/reconcile-requested-at); see it with: kubectl celld rollout status {name} -n {namespace}"
    )]
    Ended {
        /// The rollout.
        name: String,
        /// Its namespace.
        namespace: String,
        /// Its phase.
        phase: &'static str,
        /// The revision it shipped.
        revision: String,
        /// What was asked (`promote`, `abort`).
        verb: &'static str,
    },

    /// `promote --wave N` beyond the rollout's waves.
    #[error(
        "CelldRollout {namespace}/{name} has {waves} wave{}, so there is no wave {wave} to promote: give --wave from 1 to {waves}",
        if *.waves == 1 { "" } else { "s" }
    )]
    NoSuchWave {
        /// The rollout.
        name: String,
        /// Its namespace.
        namespace: String,
        /// The wave asked for.
        wave: u32,
        /// How many waves it has.
        waves: usize,
    },

    /// `rollout status -w` saw the rollout end other than Succeeded.
    #[error(
        "CelldRollout {namespace}/{name} ended {phase}{}; see it with: kubectl celld rollout status {name} -n {namespace}",
        why_note(.why)
    )]
    Unsuccessful {
        /// The rollout.
        name: String,
        /// Its namespace.
        namespace: String,
        /// Its phase: Halted, RolledBack or Aborted.
        phase: &'static str,
        /// The Stalled condition's reason and message, when reported.
        why: Option<String>,
    },
}

impl RolloutError {
    /// [`RolloutError::NotInstalled`], naming this release's manifest.
    pub fn not_installed() -> Self {
        Self::NotInstalled {
            manifest: super::messages::release_manifest(),
        }
    }

    /// The process exit code: 2 for a command line the command does not take, else 1.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::NeedsImage { .. } | Self::NoSuchWave { .. } => 2,
            _ => 1,
        }
    }
}

fn not_found(name: &str, namespace: &str, near: &[String]) -> String {
    let mut msg = format!("CelldRollout '{name}' does not exist in namespace '{namespace}'");
    if near.is_empty() {
        msg.push_str(&format!(
            "; list the rollouts with: kubectl get celldrollouts -n {namespace} (or -A)"
        ));
    } else {
        msg.push_str(&format!("; did you mean {}?", near.join(", ")));
    }
    msg
}

/// `word` as one shell word: as is when it holds only characters no shell reads, else quoted.
fn shell_word(word: &str) -> String {
    let plain = word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./=,:%".contains(c));
    if plain && !word.is_empty() {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

fn why_note(why: &Option<String>) -> String {
    why.as_ref().map(|w| format!(": {w}")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_suggests_or_says_how_to_list() {
        let e = RolloutError::NotFound {
            name: "wbe".into(),
            namespace: "tenants".into(),
            near: vec!["web".into()],
        };
        insta::assert_snapshot!(e.to_string(), @"CelldRollout 'wbe' does not exist in namespace 'tenants'; did you mean web?");
        let e = RolloutError::NotFound {
            name: "api".into(),
            namespace: "tenants".into(),
            near: vec![],
        };
        insta::assert_snapshot!(e.to_string(), @"CelldRollout 'api' does not exist in namespace 'tenants'; list the rollouts with: kubectl get celldrollouts -n tenants (or -A)");
        assert_eq!(e.exit_code(), 1);
    }

    #[test]
    fn a_wave_beyond_the_last_is_refused_as_a_command_line_error() {
        let e = RolloutError::NoSuchWave {
            name: "web".into(),
            namespace: "tenants".into(),
            wave: 2,
            waves: 1,
        };
        insta::assert_snapshot!(e.to_string(), @"CelldRollout tenants/web has 1 wave, so there is no wave 2 to promote: give --wave from 1 to 1");
        assert_eq!(e.exit_code(), 2);
    }

    #[test]
    fn an_unsuccessful_end_names_the_phase_and_why() {
        let e = RolloutError::Unsuccessful {
            name: "web".into(),
            namespace: "tenants".into(),
            phase: "RolledBack",
            why: Some(
                "GateFailed: wave 1: CelldFleet acme: node acme-0 refused the version".into(),
            ),
        };
        insta::assert_snapshot!(e.to_string(), @"CelldRollout tenants/web ended RolledBack: GateFailed: wave 1: CelldFleet acme: node acme-0 refused the version; see it with: kubectl celld rollout status web -n tenants");
        assert_eq!(e.exit_code(), 1);
    }
}

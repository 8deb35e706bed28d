//! A fleet whose Worker comes from spec.source: the operator publishes the source, so git
//! decides what the fleet serves. `deploy` refuses such a fleet before creating anything, unless
//! publishing from the source is suspended, the deploy is a dry run, or `--force` is given; it
//! then says what the operator will do about the deploy.

use crate::cluster::source::{self, Suspension};
use crate::error::{Error, Result};
use celld_api::{CelldFleet, DriftPolicy};

/// Whether `deploy` may go on with `fleet` (in `namespace`): Ok(None) for a fleet without
/// spec.source, Ok(Some(line)) with a note or a warning to print first, or the refusal.
pub fn check(
    fleet: &CelldFleet,
    namespace: &str,
    force: bool,
    dry_run: bool,
) -> Result<Option<String>> {
    let Some(spec) = source::of(fleet) else {
        return Ok(None);
    };
    let name = fleet.metadata.name.as_deref().unwrap_or_default();
    let sourced = Sourced {
        fleet: name,
        namespace,
        what: format!(
            "fleet {namespace}/{name} publishes its Worker from spec.source ({}, driftPolicy {})",
            source::name(spec),
            source::policy(spec.drift_policy)
        ),
        policy: spec.drift_policy,
    };
    if let Some(suspension) = source::suspension(fleet) {
        return Ok(Some(sourced.suspended(&suspension)));
    }
    if dry_run {
        return Ok(Some(format!(
            "Note: {}; a dry run publishes nothing, so it goes ahead",
            sourced.what
        )));
    }
    if force {
        return Ok(Some(sourced.forced()));
    }
    Err(Error::SourceOwned(sourced.refusal()))
}

/// What the messages say about the fleet and its source.
struct Sourced<'a> {
    fleet: &'a str,
    namespace: &'a str,
    /// `fleet NS/NAME publishes its Worker from spec.source (SOURCE, driftPolicy POLICY)`.
    what: String,
    policy: DriftPolicy,
}

impl Sourced<'_> {
    fn suspend(&self) -> String {
        source::suspend_command(self.fleet, self.namespace)
    }

    fn refusal(&self) -> String {
        let consequence = match self.policy {
            DriftPolicy::Correct => {
                "the operator would publish the source again over this deploy at its next reconcile"
            }
            DriftPolicy::Report => {
                "the operator would report this deploy as drift (SourceSynced=False, reason Drifted) until the source's next revision replaces it"
            }
        };
        format!(
            "{}: {consequence}. Nothing was created. To deploy by hand, suspend publishing from the source first: {} (or set spec.source.suspend: true in git), then deploy again; or deploy anyway with --force",
            self.what,
            self.suspend()
        )
    }

    fn forced(&self) -> String {
        let consequence = match self.policy {
            DriftPolicy::Correct => format!(
                "the operator will publish the source again over this deploy within a reconcile, unless publishing from the source is suspended: {}",
                self.suspend()
            ),
            DriftPolicy::Report => "the operator will report this deploy as drift (SourceSynced=False, reason Drifted) and leave it in place until the source's next revision replaces it".to_string(),
        };
        format!(
            "warning: deploying anyway (--force): {}; {consequence}",
            self.what
        )
    }

    fn suspended(&self, suspension: &Suspension) -> String {
        let later = match self.policy {
            DriftPolicy::Correct => "the operator then publishes the source again over this deploy",
            DriftPolicy::Report => "the operator then reports this deploy as drift",
        };
        let resume = match suspension {
            Suspension::Spec => "set spec.source.suspend: false in git".to_string(),
            Suspension::Annotation(_) => format!(
                "resume with: {}",
                source::resume_command(self.fleet, self.namespace)
            ),
        };
        format!(
            "Note: {}, and publishing from the source is suspended ({}), so the operator leaves this deploy in place; to publish from the source again, {resume} ({later})",
            self.what,
            suspension.describe()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celld_api::labels::SOURCE_SUSPENDED;
    use celld_api::{CelldFleetSpec, FluxSourceKind, FluxSourceRef, WorkerSource};
    use std::collections::BTreeMap;

    const IMAGE: &str = "ghcr.io/acme/web-worker:1.4.2@sha256:3b6c0f5e2a1d4c7b8e9f0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5";

    fn fleet(source: Option<WorkerSource>) -> CelldFleet {
        let mut spec = CelldFleetSpec::with_bucket("s3://celld/web");
        spec.source = source.map(Box::new);
        CelldFleet::new("web", spec)
    }

    fn flux(policy: DriftPolicy) -> WorkerSource {
        WorkerSource {
            image: None,
            source_ref: Some(FluxSourceRef {
                kind: FluxSourceKind::OCIRepository,
                name: "web-worker".into(),
            }),
            drift_policy: policy,
            ..WorkerSource::from_image(IMAGE)
        }
    }

    #[test]
    fn a_fleet_without_source_deploys_as_before() {
        assert_eq!(check(&fleet(None), "apps", false, false).unwrap(), None);
        assert_eq!(check(&fleet(None), "apps", true, false).unwrap(), None);
    }

    #[test]
    fn a_sourced_fleet_is_refused_naming_the_source_and_the_ways_on() {
        let e = check(
            &fleet(Some(WorkerSource::from_image(IMAGE))),
            "apps",
            false,
            false,
        )
        .unwrap_err();
        assert_eq!(e.exit_code(), 1);
        insta::assert_snapshot!("refused_image_correct", e.to_string());
        let e = check(
            &fleet(Some(flux(DriftPolicy::Report))),
            "apps",
            false,
            false,
        )
        .unwrap_err();
        insta::assert_snapshot!("refused_flux_report", e.to_string());
    }

    #[test]
    fn force_warns_what_the_operator_will_do() {
        let correct = check(
            &fleet(Some(WorkerSource::from_image(IMAGE))),
            "apps",
            true,
            false,
        );
        insta::assert_snapshot!("force_correct", correct.unwrap().unwrap());
        let report = check(&fleet(Some(flux(DriftPolicy::Report))), "apps", true, false);
        insta::assert_snapshot!("force_report", report.unwrap().unwrap());
    }

    #[test]
    fn a_suspended_source_deploys_with_a_note() {
        let mut by_hand = fleet(Some(WorkerSource::from_image(IMAGE)));
        by_hand.metadata.annotations = Some(BTreeMap::from([(
            SOURCE_SUSPENDED.to_string(),
            "incident 42: hotfix by hand".to_string(),
        )]));
        insta::assert_snapshot!(
            "suspended_by_annotation",
            check(&by_hand, "apps", false, false).unwrap().unwrap()
        );
        let mut in_git = flux(DriftPolicy::Report);
        in_git.suspend = true;
        insta::assert_snapshot!(
            "suspended_in_git",
            check(&fleet(Some(in_git)), "apps", false, false)
                .unwrap()
                .unwrap()
        );
    }

    #[test]
    fn a_dry_run_goes_ahead_with_a_note() {
        let note = check(
            &fleet(Some(flux(DriftPolicy::Correct))),
            "apps",
            false,
            true,
        );
        insta::assert_snapshot!(note.unwrap().unwrap(), @"Note: fleet apps/web publishes its Worker from spec.source (OCIRepository/web-worker, driftPolicy Correct); a dry run publishes nothing, so it goes ahead");
    }
}

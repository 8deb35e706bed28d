//! A rollback of a fleet whose Worker comes from spec.source: before any pointer is written,
//! publishing from the source is suspended with the `platform.celld.dev/source-suspended`
//! annotation (which GitOps tools leave alone), so the operator does not publish the source
//! over the rollback. A rollback that fails before the fleet pointer is written takes the
//! annotation off again.

use crate::cluster::fleet_context::FleetContext;
use crate::cluster::source::{self, Suspension};
use crate::error::{Error, Result};
use crate::text::progress::Progress;
use celld_api::labels::SOURCE_SUSPENDED;

/// Where a sourced fleet's suspension stands once the rollback checked it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Suspended {
    /// The rollback set the annotation, to this reason.
    ByRollback(String),
    /// It was suspended before (by git or by hand); the rollback left that alone.
    Already(Suspension),
}

/// The annotation's value: the rollback, its target and when.
pub fn reason(to: &str, from: &str, at: jiff::Timestamp) -> String {
    let at = at.round(jiff::Unit::Second).unwrap_or(at);
    format!("kubectl celld rollback to version {to} (from {from}) at {at}")
}

/// Suspends publishing from the fleet's source before the rollback writes a pointer: None for
/// a fleet without spec.source. When the annotation cannot be set the rollback stops there.
pub async fn before_writing(
    context: &FleetContext,
    to: &str,
    from: &str,
    progress: &mut Progress,
) -> Result<Option<Suspended>> {
    if source::of(&context.fleet).is_none() {
        return Ok(None);
    }
    if let Some(already) = source::suspension(&context.fleet) {
        return Ok(Some(Suspended::Already(already)));
    }
    let reason = reason(to, from, jiff::Timestamp::now());
    source::annotate(context, Some(&reason))
        .await
        .map_err(|e| Error::SourceSuspendFailed {
            fleet: context.name().to_string(),
            namespace: context.namespace().to_string(),
            suspend: source::suspend_command(context.name(), context.namespace()),
            source: Box::new(e),
        })?;
    progress.note(&format!(
        "Suspended publishing from spec.source: set {SOURCE_SUSPENDED}=\"{reason}\" on CelldFleet {}/{}",
        context.namespace(),
        context.name()
    ));
    Ok(Some(Suspended::ByRollback(reason)))
}

/// After a rollback that failed before the fleet pointer was written: takes off the annotation
/// the rollback set, so the source publishes as before; a failure to do so is a warning line.
pub async fn undo(context: &FleetContext, suspended: &Option<Suspended>, progress: &mut Progress) {
    if !matches!(suspended, Some(Suspended::ByRollback(_))) {
        return;
    }
    match source::annotate(context, None).await {
        Ok(()) => progress.note(&format!(
            "Nothing was rolled back: removed {SOURCE_SUSPENDED} again, publishing from spec.source goes on"
        )),
        Err(e) => progress.note(&format!(
            "warning: nothing was rolled back, but publishing from spec.source stays suspended: removing {SOURCE_SUSPENDED} failed ({e}); resume it with: {}",
            source::resume_command(context.name(), context.namespace())
        )),
    }
}

/// What the rollback tells once the pointers name the target: the source is suspended so the
/// operator does not publish it over the rollback, and how to resume.
pub fn message(fleet: &str, namespace: &str, suspended: &Suspended) -> String {
    let resume = source::resume_command(fleet, namespace);
    match suspended {
        Suspended::ByRollback(_) => format!(
            "Publishing from spec.source is suspended ({SOURCE_SUSPENDED} set by this rollback), so the operator does not publish the source over the rollback. Once the source is fixed, resume publishing with: {resume}\n"
        ),
        Suspended::Already(Suspension::Spec) => "Publishing from spec.source was already suspended (spec.source.suspend is true), so the operator does not publish the source over the rollback; set spec.source.suspend: false in git to publish from it again\n".to_string(),
        Suspended::Already(annotation) => format!(
            "Publishing from spec.source was already suspended ({}), so the operator does not publish the source over the rollback. Once the source is fixed, resume publishing with: {resume}\n",
            annotation.describe()
        ),
    }
}

/// What an interruption left of the suspension, appended to the interruption's note.
pub fn interrupted_note(fleet: &str, namespace: &str, suspended: bool) -> String {
    if suspended {
        format!(
            "; publishing from spec.source is suspended ({SOURCE_SUSPENDED}), resume it with: {}",
            source::resume_command(fleet, namespace)
        )
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reason_names_the_rollback_its_versions_and_when() {
        let at: jiff::Timestamp = "2026-11-30T15:19:28.7004Z".parse().unwrap();
        insta::assert_snapshot!(reason("0123456789abcdef", "fedcba9876543210", at), @"kubectl celld rollback to version 0123456789abcdef (from fedcba9876543210) at 2026-11-30T15:19:29Z");
    }

    #[test]
    fn the_message_says_why_and_how_to_resume() {
        let by_rollback = Suspended::ByRollback("r".into());
        insta::assert_snapshot!(
            "suspended_by_rollback",
            message("web", "apps", &by_rollback)
        );
        let by_hand = Suspended::Already(Suspension::Annotation("incident 42".into()));
        insta::assert_snapshot!(
            "already_suspended_by_hand",
            message("web", "apps", &by_hand)
        );
        let in_git = Suspended::Already(Suspension::Spec);
        insta::assert_snapshot!("already_suspended_in_git", message("web", "apps", &in_git));
        insta::assert_snapshot!(interrupted_note("web", "apps", true), @"; publishing from spec.source is suspended (platform.celld.dev/source-suspended), resume it with: kubectl annotate celldfleet web -n apps platform.celld.dev/source-suspended-");
        assert_eq!(interrupted_note("web", "apps", false), "");
    }

    #[test]
    fn a_failed_suspension_says_nothing_was_rolled_back() {
        let e = Error::SourceSuspendFailed {
            fleet: "web".into(),
            namespace: "apps".into(),
            suspend: source::suspend_command("web", "apps"),
            source: Box::new(Error::Forbidden {
                verb: "patch",
                resource: "celldfleets.platform.celld.dev".into(),
                namespace: Some("apps".into()),
            }),
        };
        assert_eq!(e.exit_code(), 1);
        insta::assert_snapshot!("suspension_failed", e.to_string());
    }
}

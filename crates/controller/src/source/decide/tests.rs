use super::*;
use crate::source::job_state::JobSeen;
use crate::source::terms::{Bucket, FIRST_BACKOFF, backoff};
use crate::source::wanted::from_image;
use celld_api::{DriftPolicy, PublishPhase, SourceStatus, WorkerSource};
use k8s_openapi::jiff::Timestamp;

const REF: &str =
    "r.example.com/w:1@sha256:ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12";
const NEXT: &str =
    "r.example.com/w:2@sha256:cd12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12";

fn spec() -> WorkerSource {
    WorkerSource::from_image(REF)
}

fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + secs).unwrap()
}

/// One decision for `reference` (key and job base derived from it) at `now`.
struct Run<'a> {
    spec: WorkerSource,
    reference: &'a str,
    suspended: Option<&'a str>,
    previous: Option<SourceStatus>,
    job: JobSeen,
    bucket: Bucket,
    now: Timestamp,
}

impl<'a> Run<'a> {
    fn new(previous: Option<SourceStatus>) -> Self {
        Self {
            spec: spec(),
            reference: REF,
            suspended: None,
            previous,
            job: JobSeen::Missing,
            bucket: Bucket::Missing,
            now: at(0),
        }
    }

    fn decide(&self) -> Decision {
        let wanted = from_image(self.reference);
        let key = if self.reference == REF { "k1" } else { "k2" }.to_string();
        let base = format!("web-src-{key}");
        decide(&Input {
            spec: &self.spec,
            wanted: &wanted,
            suspended: self.suspended,
            previous: self.previous.as_ref(),
            key: &key,
            job_base: &base,
            job: &self.job,
            bucket: &self.bucket,
            first_backoff: FIRST_BACKOFF,
            now: self.now,
        })
    }
}

/// The status after the first Job of [`REF`] started.
fn started() -> SourceStatus {
    Run::new(None).decide().status
}

/// The status after the first Job of [`REF`] published version `v1`.
fn published() -> SourceStatus {
    let mut run = Run::new(Some(started()));
    run.job = JobSeen::Succeeded { image_id: None };
    run.bucket = Bucket::Deployed("v1".into());
    run.now = at(20);
    run.decide().status
}

#[test]
fn a_first_revision_starts_one_job_and_waits_for_it() {
    let d = Run::new(None).decide();
    let start = d.start.expect("a Job");
    assert_eq!(start.name, d.status.last_attempted.as_ref().unwrap().job);
    assert!(start.name.ends_with("-1"), "{}", start.name);
    assert_eq!(d.keep, vec![start.name.clone()]);
    assert_eq!(d.synced.reason, Reason::Publishing);
    assert!(d.synced.progressing && !d.synced.stalled);
    assert_eq!(
        d.status.desired.unwrap().digest.as_deref(),
        REF.split_once('@').map(|x| x.1)
    );

    // The next reconcile, its Job running and waiting for nothing, words it the same: no
    // second status write.
    let mut waiting = Run::new(Some(started()));
    waiting.job = JobSeen::Running {
        waiting: None,
        pod: true,
    };
    assert_eq!(waiting.decide().synced, d.synced);

    // The same decision from the status it wrote: the Job is in the cache and running.
    let mut again = Run::new(Some(started()));
    again.job = JobSeen::Running {
        waiting: Some("ErrImagePull: not found".into()),
        pod: true,
    };
    let d = again.decide();
    assert_eq!(d.start, None, "never a second Job");
    assert!(
        d.synced.message.contains("its pod waits: ErrImagePull"),
        "{}",
        d.synced.message
    );
}

#[test]
fn a_job_missing_from_the_cache_is_created_again_under_the_same_name() {
    let d = Run::new(Some(started())).decide();
    let name = started().last_attempted.unwrap().job;
    assert_eq!(d.start.map(|s| s.name), Some(name));
}

#[test]
fn a_published_revision_records_the_version_the_pointer_names() {
    let status = published();
    let p = status.last_published.as_ref().expect("published");
    assert_eq!(p.version.as_deref(), Some("v1"));
    assert_eq!(
        status.last_attempted.unwrap().phase,
        PublishPhase::Succeeded
    );

    let mut run = Run::new(Some(published()));
    run.bucket = Bucket::Deployed("v1".into());
    let d = run.decide();
    assert_eq!(
        (d.synced.status, d.synced.reason),
        (Some(true), Reason::Synced)
    );
    assert_eq!(d.start, None);
}

#[test]
fn failures_back_off_then_stall_after_the_retries() {
    let mut run = Run::new(Some(started()));
    run.spec.retries = 2;
    run.job = JobSeen::Failed {
        message: "celld deploy exited with 1".into(),
    };
    run.now = at(10);
    let d = run.decide();
    assert_eq!(d.start, None);
    assert_eq!(d.wake_at, Some(at(40)), "30 s after the failure");
    assert_eq!(d.status.last_attempted.as_ref().unwrap().failures, 1);
    assert!(d.synced.progressing);

    let mut retry = Run::new(Some(d.status.clone()));
    retry.spec.retries = 2;
    retry.now = at(40);
    let d2 = retry.decide();
    let second = d2.start.expect("a second Job after the backoff");
    assert!(second.name.ends_with("-2"), "{}", second.name);
    assert!(
        d2.keep.contains(&second.name) && d2.keep.len() == 2,
        "{:?}",
        d2.keep
    );

    let mut failed = Run::new(Some(d2.status));
    failed.spec.retries = 2;
    failed.job = JobSeen::Failed {
        message: "again".into(),
    };
    failed.now = at(60);
    let d3 = failed.decide();
    assert_eq!(d3.start, None);
    assert!(d3.synced.stalled, "{:?}", d3.synced);
    assert_eq!(d3.synced.reason, Reason::PublishFailed);
    insta::assert_snapshot!(d3.synced.message, @"publishing r.example.com/w:1@sha256:ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12 failed 2 times (spec.source.retries), last with Job web-src-k1-2: again; the bucket keeps the version it serves. Fix the source and change it, or set the annotation platform.celld.dev/reconcile-requested-at to try again");
}

#[test]
fn the_backoff_doubles_up_to_ten_minutes() {
    let waits: Vec<u64> = (1..=7)
        .map(|f| backoff(FIRST_BACKOFF, f).as_secs())
        .collect();
    assert_eq!(waits, vec![30, 60, 120, 240, 480, 600, 600]);
}

#[test]
fn a_new_revision_starts_over_and_keeps_the_recorded_job() {
    let mut run = Run::new(Some(published()));
    run.reference = NEXT;
    run.bucket = Bucket::Deployed("v1".into());
    let d = run.decide();
    let start = d.start.expect("a Job for the new revision");
    assert!(start.name.ends_with("-1"));
    assert_eq!(d.status.last_attempted.as_ref().unwrap().failures, 0);
    let old = published().last_attempted.unwrap().job;
    assert!(
        d.keep.contains(&old),
        "the old Job stays until the status no longer names it"
    );

    let mut done = Run::new(Some(d.status));
    done.reference = NEXT;
    done.job = JobSeen::Succeeded { image_id: None };
    done.bucket = Bucket::Deployed("v2".into());
    let d = done.decide();
    assert_eq!(
        d.status.history.len(),
        1,
        "the previous revision moved to the history"
    );
    assert_eq!(d.status.history[0].version.as_deref(), Some("v1"));
    assert_eq!(d.synced.reason, Reason::Synced);
}

#[test]
fn drift_is_corrected_then_stalls_a_second_writer() {
    let mut status = published();
    let mut warnings = 0;
    for round in 0..4 {
        let mut run = Run::new(Some(status.clone()));
        run.bucket = Bucket::Deployed(format!("other{round}"));
        run.now = at(100 + round * 30);
        let d = run.decide();
        warnings += usize::from(d.drift_warning.is_some());
        if round < 3 {
            let start = d.start.expect("a correction");
            assert_eq!(d.synced.reason, Reason::Drifted);
            // The correction publishes the same content: the pointer names v1 again.
            let mut done = Run::new(Some(d.status));
            done.job = JobSeen::Succeeded { image_id: None };
            done.bucket = Bucket::Deployed("v1".into());
            done.now = at(110 + round * 30);
            let d = done.decide();
            assert_eq!(d.synced.reason, Reason::Synced, "{start:?}");
            status = d.status;
        } else {
            assert_eq!(d.start, None);
            assert!(d.synced.stalled);
            assert_eq!(d.synced.reason, Reason::ConcurrentWriter);
        }
    }
    assert_eq!(warnings, 4, "one Warning per drifted version");
}

#[test]
fn drift_is_only_reported_under_report() {
    let mut run = Run::new(Some(published()));
    run.spec.drift_policy = DriftPolicy::Report;
    run.bucket = Bucket::Deployed("hotfix".into());
    let d = run.decide();
    assert_eq!(d.start, None);
    assert_eq!(
        (d.synced.status, d.synced.reason),
        (Some(false), Reason::Drifted)
    );
    insta::assert_snapshot!(d.drift_warning.unwrap(), @"the bucket serves version hotfix but spec.source published r.example.com/w:1@sha256:ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12 as version v1: someone else deployed (kubectl celld deploy, or a CI job); leaving it (driftPolicy Report)");
    let mut again = Run::new(Some(d.status));
    again.spec.drift_policy = DriftPolicy::Report;
    again.bucket = Bucket::Deployed("hotfix".into());
    again.now = at(60);
    assert_eq!(again.decide().drift_warning, None, "one Warning per drift");
}

#[test]
fn a_suspended_source_starts_nothing() {
    let mut run = Run::new(None);
    run.suspended = Some("rollback by kubectl celld");
    let d = run.decide();
    assert_eq!(d.start, None);
    assert_eq!(d.synced.reason, Reason::Suspended);
    assert!(!d.synced.stalled && !d.synced.progressing);
}

#[test]
fn a_source_without_a_revision_waits_or_stalls() {
    for stalled in [true, false] {
        let wanted = Wanted::Waiting {
            reason: Reason::SourceNotFound,
            message: "m".into(),
            stalled,
        };
        let d = decide(&Input {
            spec: &spec(),
            wanted: &wanted,
            suspended: None,
            previous: None,
            key: "k",
            job_base: "web-src-k",
            job: &JobSeen::Missing,
            bucket: &Bucket::Missing,
            first_backoff: FIRST_BACKOFF,
            now: at(0),
        });
        assert_eq!(d.start, None);
        assert_eq!(
            (d.synced.stalled, d.synced.progressing),
            (stalled, !stalled)
        );
    }
}

#[test]
fn a_correction_recorded_late_keeps_the_version_of_its_content() {
    // Drift: a correction starts.
    let mut run = Run::new(Some(published()));
    run.bucket = Bucket::Deployed("other".into());
    let correcting = run.decide().status;
    // Its success is seen only after yet another writer changed the pointer.
    let mut late = Run::new(Some(correcting));
    late.job = JobSeen::Succeeded { image_id: None };
    late.bucket = Bucket::Deployed("third".into());
    let d = late.decide();
    assert_eq!(
        d.status.last_published.and_then(|p| p.version).as_deref(),
        Some("v1")
    );
    assert_eq!(
        d.synced.reason,
        Reason::Drifted,
        "the third writer is drift too"
    );
}

#[test]
fn a_failure_keeps_what_the_pod_waited_for() {
    let mut waiting = Run::new(Some(started()));
    waiting.job = JobSeen::Running {
        waiting: Some("Unschedulable: 0/3 nodes are available".into()),
        pod: true,
    };
    // At the deadline the pod is deleted before the Job is marked failed.
    let mut gone = Run::new(Some(waiting.decide().status));
    gone.job = JobSeen::Running {
        waiting: None,
        pod: false,
    };
    let mut failed = Run::new(Some(gone.decide().status));
    failed.job = JobSeen::Failed {
        message: "the deploy Job failed (DeadlineExceeded)".into(),
    };
    let d = failed.decide();
    insta::assert_snapshot!(d.status.last_attempted.unwrap().message.unwrap(), @"the deploy Job failed (DeadlineExceeded); its pod waited: Unschedulable: 0/3 nodes are available");
}

//! Whether a new fleet's pods wait for its public Service. A fleet is Ready once its pods are
//! ready and its public Service exists, and the API server creates the Services that have a
//! cluster IP one at a time: while thousands of fleets start, a public Service applied after
//! the StatefulSet comes seconds after the pods are ready, and the fleet's Ready with it.
//!
//! So the operator times every new fleet's start: its public Service's create, and its pods'
//! (StatefulSet created, every replica ready). The Service's create taking longer than the pods
//! by more than [`TOLERATED`] for a tenth of the recent fleets (a Service still to come counts
//! as late by the time since its pods were ready), new fleets apply their public
//! Service first and start their pods once it exists, or after [`LEAD_FOR`] at most, until that
//! tenth is down to [`IN_TIME`] (a measure near one bar would otherwise switch back and forth).
//! On an API server that creates Services quickly the pods start at once: a wait there would
//! cost converge time and gain nothing.

use crate::locks::lock;
use crate::shared::settings::PublicServiceFirst;
use k8s_openapi::api::apps::v1::StatefulSet;
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio::sync::Notify;
use tracing::info;

/// How much later than its pods a new fleet's public Service may come without the fleets after
/// it applying their Service first.
pub const TOLERATED: Duration = Duration::from_secs(1);

/// How much later than their pods the recent fleets' public Services may come, once new
/// fleets' pods wait for theirs, for the pods to start at once again.
pub const IN_TIME: Duration = Duration::from_millis(500);

/// The longest a new fleet's pods wait for its public Service.
pub const LEAD_FOR: Duration = Duration::from_secs(2);

/// How many of the last fleets started decide.
const WINDOW: usize = 64;

/// The fewest recent fleets that decide: fewer start their pods at once.
const FEWEST: usize = 8;

/// How long a start counts, and how long a fleet that never got ready is tracked.
const FORGET_AFTER: Duration = Duration::from_secs(300);

/// The starts of new fleets, and what the recent ones decide.
#[derive(Debug, Default)]
pub struct ServiceLead {
    mode: PublicServiceFirst,
    inner: Mutex<Inner>,
    /// Woken whenever a fleet's pods are first seen ready.
    pods_ready: Notify,
}

#[derive(Debug, Default)]
struct Inner {
    /// Fleets started whose Service's create or pods' start is still to come, by uid.
    starting: HashMap<String, Start>,
    /// When each of the last fleets started, and how much later than its pods its public
    /// Service came (seconds, below zero when sooner).
    late: VecDeque<(Instant, f64)>,
    /// Whether new fleets' pods wait for their Service, when last asked.
    leading: bool,
}

/// What is known of one fleet's start.
#[derive(Debug)]
struct Start {
    since: Instant,
    /// How long its public Service's create took.
    service: Option<Duration>,
    /// When its StatefulSet was created.
    pods_from: Option<Instant>,
    /// How long its pods took from there to be ready.
    pods: Option<Duration>,
}

impl ServiceLead {
    /// Starts of new fleets timed, their pods waiting for their public Service as `mode` says.
    pub fn new(mode: PublicServiceFirst) -> Self {
        Self {
            mode,
            ..Self::default()
        }
    }

    /// How long a new fleet's pods wait for its public Service at `now`: None when they start
    /// at once.
    pub fn lead(&self, now: Instant) -> Option<Duration> {
        match self.mode {
            PublicServiceFirst::Auto => self.measured(now),
            PublicServiceFirst::Always => Some(LEAD_FOR),
            PublicServiceFirst::Never => None,
        }
    }

    /// What the recent starts decide at `now`.
    fn measured(&self, now: Instant) -> Option<Duration> {
        let mut inner = lock(&self.inner);
        let late = recent_late(&inner, now);
        let bar = if inner.leading { IN_TIME } else { TOLERATED };
        let leading = late.is_some_and(|late| late > bar.as_secs_f64());
        let was = std::mem::replace(&mut inner.leading, leading);
        drop(inner);
        if was != leading {
            let late = late.unwrap_or_default();
            if leading {
                info!(
                    late_s = late,
                    "public Services come after their pods: new fleets start their pods once their public Service exists"
                );
            } else {
                info!(
                    late_s = late,
                    "public Services come in time again: new fleets start their pods at once"
                );
            }
        }
        leading.then_some(LEAD_FOR)
    }

    /// Records that the public Service of new fleet `uid` was created in `took`.
    pub fn service_created(&self, uid: &str, took: Duration, now: Instant) {
        let mut inner = lock(&self.inner);
        inner.start(uid, now).service = Some(took);
        inner.finish(uid, now);
    }

    /// Records that the StatefulSet of fleet `uid` was created at `at`.
    pub fn pods_applied(&self, uid: &str, at: Instant) {
        lock(&self.inner).start(uid, at).pods_from = Some(at);
    }

    /// Records that `statefulset`, of fleet `uid`, was seen at `now`: the pods' start ends when
    /// every replica is ready.
    pub fn seen(&self, uid: &str, statefulset: &StatefulSet, now: Instant) {
        if !all_ready(statefulset) {
            return;
        }
        let mut inner = lock(&self.inner);
        let Some(start) = inner.starting.get_mut(uid) else {
            return;
        };
        let Some(from) = start.pods_from.filter(|_| start.pods.is_none()) else {
            return;
        };
        start.pods = Some(now.saturating_duration_since(from));
        inner.finish(uid, now);
        drop(inner);
        self.pods_ready.notify_waiters();
    }

    /// Waits until the pods of fleet `uid` are ready, or for `limit` at most. Returns at once
    /// when its start is not tracked, or its pods are ready.
    pub async fn pods(&self, uid: &str, limit: Duration) {
        let until = tokio::time::Instant::now() + limit;
        loop {
            let woken = self.pods_ready.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            let waiting = lock(&self.inner)
                .starting
                .get(uid)
                .is_some_and(|s| s.pods_from.is_some() && s.pods.is_none());
            if !waiting || tokio::time::timeout_at(until, woken).await.is_err() {
                return;
            }
        }
    }

    /// Forgets the starts of fleets whose uid `live` does not keep.
    pub fn retain(&self, live: impl Fn(&str) -> bool) {
        crate::map_retain::retain(&mut lock(&self.inner).starting, |uid, _| live(uid));
    }
}

impl Inner {
    /// The start of fleet `uid`, tracked from `now` when it was not; starts older than
    /// [`FORGET_AFTER`] are forgotten first.
    fn start(&mut self, uid: &str, now: Instant) -> &mut Start {
        if !self.starting.contains_key(uid) {
            crate::map_retain::retain(&mut self.starting, |_, s| {
                now.saturating_duration_since(s.since) < FORGET_AFTER
            });
        }
        self.starting.entry(uid.to_string()).or_insert(Start {
            since: now,
            service: None,
            pods_from: None,
            pods: None,
        })
    }

    /// Counts the start of fleet `uid` among the recent ones once both its Service's create and
    /// its pods' start are known.
    fn finish(&mut self, uid: &str, now: Instant) {
        let Some(Start {
            service: Some(service),
            pods: Some(pods),
            ..
        }) = self.starting.get(uid)
        else {
            return;
        };
        let late = service.as_secs_f64() - pods.as_secs_f64();
        self.starting.remove(uid);
        if self.late.len() == WINDOW {
            self.late.pop_front();
        }
        self.late.push_back((now, late));
    }
}

/// How late the public Services of the recent fleets came, at the tenth of them that came
/// latest: None for fewer than [`FEWEST`] fleets started within [`FORGET_AFTER`]. A fleet whose
/// pods are ready and whose Service is still to come counts too, late by at least the time since
/// its pods were ready: the fleets whose Services come quickly are the first to be counted, and
/// without the others the measure would dip each time new fleets begin to lead.
fn recent_late(inner: &Inner, now: Instant) -> Option<f64> {
    let counts = |at: Instant| now.saturating_duration_since(at) < FORGET_AFTER;
    let still_to_come = inner.starting.values().filter_map(|s| match s {
        Start {
            since,
            service: None,
            pods_from: Some(from),
            pods: Some(pods),
        } if counts(*since) => Some(now.saturating_duration_since(*from + *pods).as_secs_f64()),
        _ => None,
    });
    let mut recent: Vec<f64> = inner
        .late
        .iter()
        .filter(|(at, _)| counts(*at))
        .map(|(_, late)| *late)
        .chain(still_to_come)
        .collect();
    if recent.len() < FEWEST {
        return None;
    }
    let at = recent.len() - recent.len().div_ceil(10);
    let (_, nth, _) = recent.select_nth_unstable_by(at, f64::total_cmp);
    Some(*nth)
}

/// Whether `statefulset` asks for pods and has every one of them ready.
fn all_ready(statefulset: &StatefulSet) -> bool {
    let wanted = statefulset
        .spec
        .as_ref()
        .and_then(|s| s.replicas)
        .unwrap_or(1);
    let ready = statefulset
        .status
        .as_ref()
        .and_then(|s| s.ready_replicas)
        .unwrap_or(0);
    wanted > 0 && ready >= wanted
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::{StatefulSetSpec, StatefulSetStatus};

    fn statefulset(replicas: i32, ready: i32) -> StatefulSet {
        StatefulSet {
            spec: Some(StatefulSetSpec {
                replicas: Some(replicas),
                ..Default::default()
            }),
            status: Some(StatefulSetStatus {
                replicas,
                ready_replicas: Some(ready),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    /// Starts fleet `uid` at `at`: its pods ready after `pods` ms, its Service created in
    /// `service` ms.
    fn start(lead: &ServiceLead, uid: &str, at: Instant, pods: u64, service: u64) {
        lead.pods_applied(uid, at);
        let ready = at + Duration::from_millis(pods);
        lead.seen(uid, &statefulset(2, 1), ready);
        lead.seen(uid, &statefulset(2, 2), ready);
        lead.service_created(uid, Duration::from_millis(service), at);
    }

    #[test]
    fn pods_start_at_once_until_a_tenth_of_the_recent_services_come_late() {
        let lead = ServiceLead::default();
        let t0 = Instant::now();
        // Too few starts to say: even late Services decide nothing.
        for i in 0..FEWEST - 1 {
            start(&lead, &format!("early{i}"), t0, 500, 3_000);
        }
        assert_eq!(lead.lead(t0), None);
        let lead = ServiceLead::default();
        // 18 in time (or only a little late), 2 late by more than tolerated: a tenth.
        for i in 0..18 {
            start(&lead, &format!("f{i}"), t0, 800, 1_500);
        }
        assert_eq!(lead.lead(t0), None);
        start(&lead, "late1", t0, 500, 2_000);
        assert_eq!(lead.lead(t0), None, "one late in 19 is less than a tenth");
        start(&lead, "late2", t0, 500, 1_600);
        assert_eq!(lead.lead(t0), Some(LEAD_FOR));
        // The window moves on: Services a little late keep the pods waiting, until they are
        // in time.
        for i in 0..WINDOW {
            start(&lead, &format!("g{i}"), t0, 800, 1_600);
        }
        assert_eq!(lead.lead(t0), Some(LEAD_FOR), "late by 0.8 s, under 1 s");
        for i in 0..WINDOW {
            start(&lead, &format!("h{i}"), t0, 800, 1_200);
        }
        assert_eq!(lead.lead(t0), None, "late by 0.4 s");
        for i in 0..WINDOW {
            start(&lead, &format!("k{i}"), t0, 800, 1_600);
        }
        assert_eq!(lead.lead(t0), None, "late by 0.8 s does not start it again");
    }

    #[test]
    fn the_flag_can_always_or_never_lead_with_the_service() {
        let t0 = Instant::now();
        for (mode, late, quick) in [
            (PublicServiceFirst::Always, Some(LEAD_FOR), Some(LEAD_FOR)),
            (PublicServiceFirst::Never, None, None),
            (PublicServiceFirst::Auto, Some(LEAD_FOR), None),
        ] {
            let slow = ServiceLead::new(mode);
            let fast = ServiceLead::new(mode);
            for i in 0..20 {
                start(&slow, &format!("f{i}"), t0, 500, 4_000);
                start(&fast, &format!("f{i}"), t0, 500, 100);
            }
            assert_eq!((slow.lead(t0), fast.lead(t0)), (late, quick), "{mode:?}");
        }
    }

    #[test]
    fn a_service_still_to_come_counts_as_late_by_the_time_since_the_pods_were_ready() {
        let lead = ServiceLead::default();
        let t0 = Instant::now();
        for i in 0..18 {
            start(&lead, &format!("f{i}"), t0, 800, 1_000);
        }
        // Five fleets' pods ready at t0 + 0.5 s, their Services not created yet.
        for i in 0..5 {
            let uid = format!("waiting{i}");
            lead.pods_applied(&uid, t0);
            lead.seen(&uid, &statefulset(1, 1), t0 + Duration::from_millis(500));
        }
        let at = |ms: u64| lead.lead(t0 + Duration::from_millis(ms));
        assert_eq!(at(1_000), None, "0.5 s late so far");
        assert_eq!(at(2_000), Some(LEAD_FOR), "1.5 s late so far, for 5 of 23");
        // The quick Services of fleets started meanwhile are counted first: they do not
        // switch it off while more than a tenth are still to come.
        for i in 0..20 {
            start(&lead, &format!("g{i}"), t0, 800, 1_000);
        }
        assert_eq!(at(2_000), Some(LEAD_FOR), "5 of 43 are still to come");
        // Their Services come at last, 0.4 s after the pods: it stops.
        for i in 0..5 {
            lead.service_created(&format!("waiting{i}"), Duration::from_millis(900), t0);
        }
        assert_eq!(at(2_000), None);
    }

    #[test]
    fn only_recent_starts_decide() {
        let lead = ServiceLead::default();
        let t0 = Instant::now();
        for i in 0..20 {
            start(&lead, &format!("f{i}"), t0, 500, 4_000);
        }
        assert_eq!(lead.lead(t0 + FORGET_AFTER / 2), Some(LEAD_FOR));
        assert_eq!(lead.lead(t0 + FORGET_AFTER), None);
    }

    #[test]
    fn a_start_counts_once_both_its_service_and_its_pods_are_known() {
        let lead = ServiceLead::default();
        let t0 = Instant::now();
        for i in 0..10 {
            // Services known, pods never ready: nothing counts.
            lead.pods_applied(&format!("f{i}"), t0);
            lead.service_created(&format!("f{i}"), Duration::from_secs(4), t0);
            lead.seen(&format!("f{i}"), &statefulset(2, 1), t0);
        }
        assert_eq!(lead.lead(t0), None);
        // A fleet seen ready whose StatefulSet this operator did not create counts neither.
        for i in 0..10 {
            lead.service_created(&format!("g{i}"), Duration::from_secs(4), t0);
            lead.seen(&format!("g{i}"), &statefulset(1, 1), t0);
        }
        assert_eq!(lead.lead(t0), None);
        // Their pods ready at last, in the order the watch sees them.
        for i in 0..10 {
            lead.seen(
                &format!("f{i}"),
                &statefulset(2, 2),
                t0 + Duration::from_secs(1),
            );
        }
        assert_eq!(lead.lead(t0), Some(LEAD_FOR));
    }

    #[test]
    fn starts_of_fleets_gone_or_never_ready_are_forgotten() {
        let lead = ServiceLead::default();
        let t0 = Instant::now();
        lead.pods_applied("gone", t0);
        lead.pods_applied("stuck", t0);
        lead.pods_applied("kept", t0 + FORGET_AFTER / 2);
        lead.retain(|uid| uid != "gone");
        let starting = |uid: &str| lock(&lead.inner).starting.contains_key(uid);
        assert!(!starting("gone"));
        assert!(starting("stuck") && starting("kept"));
        // A new start forgets those tracked longer than FORGET_AFTER.
        lead.pods_applied("new", t0 + FORGET_AFTER + Duration::from_secs(1));
        assert!(!starting("stuck"));
        assert!(starting("kept") && starting("new"));
    }

    #[test]
    fn a_statefulset_is_ready_when_it_asks_for_pods_and_all_are() {
        assert!(all_ready(&statefulset(3, 3)));
        assert!(!all_ready(&statefulset(3, 2)));
        assert!(!all_ready(&statefulset(0, 0)));
        assert!(!all_ready(&StatefulSet::default()));
    }

    #[tokio::test(start_paused = true)]
    async fn the_first_status_waits_for_the_pods_or_the_limit() {
        let lead = std::sync::Arc::new(ServiceLead::default());
        let limit = Duration::from_secs(5);
        // Not tracked: at once.
        let t = tokio::time::Instant::now();
        lead.pods("unknown", limit).await;
        assert_eq!(t.elapsed(), Duration::ZERO);
        // Pods never ready: the limit.
        lead.pods_applied("slow", Instant::now());
        lead.pods("slow", limit).await;
        assert_eq!(t.elapsed(), limit);
        // Pods ready after a second (another fleet's first, which wakes the wait too).
        lead.pods_applied("quick", Instant::now());
        lead.pods_applied("other", Instant::now());
        let watch = lead.clone();
        let ready = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(500)).await;
            watch.seen("other", &statefulset(1, 1), Instant::now());
            tokio::time::sleep(Duration::from_millis(500)).await;
            watch.seen("quick", &statefulset(1, 1), Instant::now());
        });
        let t = tokio::time::Instant::now();
        lead.pods("quick", limit).await;
        assert_eq!(t.elapsed(), Duration::from_secs(1));
        assert!(ready.await.is_ok());
        // Ready already: at once.
        let t = tokio::time::Instant::now();
        lead.pods("quick", limit).await;
        assert_eq!(t.elapsed(), Duration::ZERO);
    }
}

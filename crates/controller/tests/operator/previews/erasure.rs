//! A preview's end empties only what it claimed: the prefix recorded (with a marker holding
//! the preview's UID) when its fleet was made, not what its fleet's spec says at the end; it
//! waits while another fleet keeps its data inside that prefix; a prefix another preview
//! claimed is never used.

use super::harness::*;
use crate::support::*;
use celld_api::{CelldFleet, PreviewPhase};
use kube::ResourceExt;
use kube::api::{DeleteParams, Patch, PatchParams};
use serde_json::json;

/// The key of the marker a claim writes under a preview's prefix.
const MARKER: &str = ".celld-preview";

#[tokio::test]
async fn an_expiry_empties_only_the_claimed_prefix_and_waits_for_a_fleet_inside_it() {
    let (s, _op) = Setup::new("preview-claim", true).await;
    let ns = s.env.namespace().to_string();
    s.fill("pr-7").await;
    // Objects no preview owns, beside the previews.
    let victim = format!("{}/victim", s.previews);
    s.s3.put_object(&format!("{victim}/data.json"), b"{}".to_vec())
        .await
        .expect("object written");
    let created = create(
        &s.env,
        &preview("pr-7", json!({"fleet": "web", "ttl": SHORT_TTL})),
    )
    .await
    .expect("admitted");
    let ready = wait_phase(&s.env, "pr-7", PreviewPhase::Ready, TIMEOUT).await;
    let bucket = format!("s3://{}/{}", s.s3.bucket, s.preview_prefix("pr-7"));
    assert_eq!(
        ready
            .status
            .as_ref()
            .and_then(|st| st.claimed_bucket.as_deref()),
        Some(bucket.as_str())
    );
    let marker =
        s.s3.get_object(&format!("{}/{MARKER}", s.preview_prefix("pr-7")))
            .await
            .expect("read")
            .expect("the claim's marker");
    let marker: serde_json::Value = serde_json::from_slice(&marker).expect("JSON");
    assert_eq!(marker["uid"], json!(created.uid().unwrap_or_default()));

    // Another fleet keeps its data inside the preview's prefix.
    apply_fleet(
        &s.env,
        &inline_fleet(
            "inner",
            &s.s3,
            &format!("{}/inner", s.preview_prefix("pr-7")),
            json!({}),
        )
        .expect("a CelldFleet"),
    )
    .await;
    let expiring = wait_phase(&s.env, "pr-7", PreviewPhase::Expiring, EXPIRY).await;
    let waiting = wait_until_condition_says(&s, "pr-7", &format!("CelldFleet {ns}/inner")).await;
    assert!(
        waiting.contains(&format!(
            "CelldFleet {ns}/inner to keep its data elsewhere: it is at or under {bucket}"
        )),
        "{waiting}"
    );
    let _ = expiring;
    assert_eq!(
        s.keys(&s.preview_prefix("pr-7")).await.len(),
        4,
        "nothing deleted while a fleet is inside"
    );

    // The preview's fleet is pointed elsewhere during the expiry: the claim decides.
    let edit =
        json!({"spec": {"objectStorage": {"bucket": format!("s3://{}/{victim}", s.s3.bucket)}}});
    s.env
        .api::<CelldFleet>()
        .patch("pr-7", &PatchParams::default(), &Patch::Merge(&edit))
        .await
        .expect("the preview's fleet edited by hand");
    s.env
        .api::<CelldFleet>()
        .delete("inner", &DeleteParams::default())
        .await
        .expect("the inner fleet deleted");
    let expired = wait_phase(&s.env, "pr-7", PreviewPhase::Expired, EXPIRY).await;
    assert_eq!(preview_condition(&expired, "DataRemoved").status, "True");
    assert_eq!(
        s.keys(&s.preview_prefix("pr-7")).await,
        Vec::<String>::new(),
        "the claimed prefix is emptied"
    );
    assert_eq!(
        s.keys(&victim).await.len(),
        1,
        "what the edited spec named survives"
    );
}

#[tokio::test]
async fn a_prefix_another_preview_claimed_is_never_used() {
    let (s, _op) = Setup::new("preview-claimed", true).await;
    s.fill("pr-8").await;
    let other = json!({"uid": "0000-another-preview", "preview": "elsewhere/pr-8"});
    s.s3.put_object(
        &format!("{}/{MARKER}", s.preview_prefix("pr-8")),
        serde_json::to_vec(&other).expect("JSON"),
    )
    .await
    .expect("marker written");
    create(&s.env, &preview("pr-8", json!({"fleet": "web"})))
        .await
        .expect("admitted");
    let failed = wait_phase(&s.env, "pr-8", PreviewPhase::Failed, TIMEOUT).await;
    let ready = preview_condition(&failed, "Ready");
    assert_eq!(ready.reason, "PrefixTaken", "{ready:?}");
    assert!(
        ready
            .message
            .contains("is claimed by preview elsewhere/pr-8 (UID 0000-another-preview)"),
        "{}",
        ready.message
    );
    assert!(
        s.env
            .api::<CelldFleet>()
            .get_opt("pr-8")
            .await
            .expect("read")
            .is_none(),
        "no fleet writes into another's prefix"
    );
    // Deleting the preview leaves the other's data alone.
    previews_api(&s.env)
        .delete("pr-8", &DeleteParams::default())
        .await
        .expect("deleted");
    wait_gone(&previews_api(&s.env), "pr-8", "CelldPreview").await;
    assert_eq!(s.keys(&s.preview_prefix("pr-8")).await.len(), 4);
}

/// The DataRemoved message of preview `name` once it contains `part`.
async fn wait_until_condition_says(s: &Setup, name: &str, part: &str) -> String {
    celld_testkit::wait_until(
        format!("preview {name}'s DataRemoved naming {part}"),
        EXPIRY,
        || async {
            let Ok(p) = previews_api(&s.env).get(name).await else {
                return celld_testkit::Check::Pending("not read".into());
            };
            let message = p
                .status
                .as_ref()
                .and_then(|st| celld_api::conditions::find(&st.conditions, "DataRemoved"))
                .map(|c| c.message.clone())
                .unwrap_or_default();
            if message.contains(part) {
                celld_testkit::Check::Done(message)
            } else {
                celld_testkit::Check::Pending(message)
            }
        },
    )
    .await
    .expect("the condition names it")
}

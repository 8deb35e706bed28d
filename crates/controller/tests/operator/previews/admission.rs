//! Admission refuses a preview its fleet does not allow (or a TTL above its maximum, or a name
//! another fleet has), and the status says what it cannot see.

use super::harness::*;
use crate::support::*;
use celld_api::{CelldFleet, PreviewPhase};
use celld_testkit::{Check, wait_until};
use kube::ResourceExt;
use kube::api::DeleteParams;
use serde_json::json;

#[tokio::test]
async fn admission_refuses_a_preview_its_fleet_does_not_allow_and_the_status_says_what_it_cannot_see()
 {
    let (s, _op) = Setup::new("preview-refused", false).await;
    // The API server loads a new policy within a second or so: wait until it refuses.
    let refused = wait_until("the previews policy refuses", TIMEOUT, || async {
        match create(&s.env, &preview("pr-1", json!({"fleet": "web"}))).await {
            Err(kube::Error::Api(e)) => Check::Done(e.message),
            Ok(admitted) => {
                let _ = previews_api(&s.env)
                    .delete(&admitted.name_any(), &DeleteParams::default())
                    .await;
                Check::Pending("admitted".into())
            }
            Err(e) => Check::Pending(e.to_string()),
        }
    })
    .await
    .expect("refused");
    assert!(
        refused
            .contains("spec.fleet: CelldFleet web does not allow previews: set its spec.previews"),
        "{refused}"
    );

    // Previews that would borrow the fleet's own credentials are refused.
    let mut allowing = json!({"previews": {
        "baseDomain": "preview.example.com",
        "bucket": format!("s3://{}/{}", s.s3.bucket, s.previews),
        "ingressClass": "nginx",
        "ttl": "1h",
        "maxTtl": "2h",
    }});
    apply_fleet(
        &s.env,
        &inline_fleet("web", &s.s3, &s.prefix, allowing.clone()).expect("a CelldFleet"),
    )
    .await;
    let shared = wait_until(
        "previews with shared credentials refused",
        TIMEOUT,
        || async {
            match create(&s.env, &preview("pr-4", json!({"fleet": "web"}))).await {
                Err(kube::Error::Api(e)) if e.message.contains("credentials") => {
                    Check::Done(e.message)
                }
                other => Check::Pending(format!("{other:?}")),
            }
        },
    )
    .await
    .expect("refused");
    assert!(
        shared.contains("spec.fleet: CelldFleet web gives its previews no credentials of their own, and its own reach its production prefix: set its spec.previews.credentials, or accept the risk with spec.previews.shareCredentials: true"),
        "{shared}"
    );
    allowing["previews"]["credentials"] = json!({"credentialsSecretRef": {"name": "creds"}});
    apply_fleet(
        &s.env,
        &inline_fleet("web", &s.s3, &s.prefix, allowing).expect("a CelldFleet"),
    )
    .await;
    let chooser = wait_until("a source choosing its deployer refused", TIMEOUT, || async {
        let source = json!({"fleet": "web", "source": {"image": {"reference": "registry.example.com/w:1", "layout": "Deployer"}}});
        match create(&s.env, &preview("pr-5", source)).await {
            Err(kube::Error::Api(e)) if e.message.contains("spec.source") => Check::Done(e.message),
            other => Check::Pending(format!("{other:?}")),
        }
    })
    .await
    .expect("refused");
    assert!(
        chooser.contains("does not allow it: remove them, or set the fleet's spec.previews.allowSourceDeployer: true"),
        "{chooser}"
    );
    let too_long = wait_until("a TTL above the maximum refused", TIMEOUT, || async {
        match create(
            &s.env,
            &preview("pr-2", json!({"fleet": "web", "ttl": "3h"})),
        )
        .await
        {
            Err(kube::Error::Api(e)) if e.message.contains("spec.ttl") => Check::Done(e.message),
            other => Check::Pending(format!("{other:?}")),
        }
    })
    .await
    .expect("refused");
    assert!(
        too_long.contains(
            "spec.ttl: 3h is longer than the 2h CelldFleet web allows (spec.previews.maxTtl)"
        ),
        "{too_long}"
    );
    let taken = create(&s.env, &preview("web", json!({"fleet": "web"})))
        .await
        .expect_err("a preview named like a fleet is refused");
    assert!(
        taken
            .to_string()
            .contains("metadata.name: a CelldFleet named web already exists"),
        "{taken}"
    );

    // A fleet that does not exist yet is not refused (it may come next): the status says so.
    create(&s.env, &preview("pr-3", json!({"fleet": "api"})))
        .await
        .expect("admitted");
    let failed = wait_phase(&s.env, "pr-3", PreviewPhase::Failed, TIMEOUT).await;
    let ready = preview_condition(&failed, "Ready");
    assert_eq!(ready.reason, "FleetNotFound");
    assert!(
        ready
            .message
            .contains("spec.fleet names CelldFleet api, which does not exist"),
        "{}",
        ready.message
    );
    assert_eq!(
        wait_events(&s.env, "pr-3", "Warning", "FleetNotFound")
            .await
            .len(),
        1
    );
    assert!(
        s.env
            .api::<CelldFleet>()
            .get_opt("pr-3")
            .await
            .expect("read")
            .is_none()
    );
}

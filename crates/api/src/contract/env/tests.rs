use super::*;

fn var(name: &str, value: &str) -> EnvVar {
    EnvVar {
        name: name.into(),
        value: Some(value.into()),
        ..EnvVar::default()
    }
}

fn names(image: &str, env: &[EnvVar]) -> Vec<String> {
    refusals(image, env).into_iter().map(|r| r.name).collect()
}

const V040: &str = "ghcr.io/denoland/celld:v0.4.0";
const V041: &str = "ghcr.io/denoland/celld:v0.4.1";
const V051: &str = "ghcr.io/denoland/celld:v0.5.1";
const V061: &str = "ghcr.io/denoland/celld:v0.6.1";

#[test]
fn a_known_version_refuses_exactly_its_removed_variables() {
    let env = [
        var("CELLD_OTEL_SINK", ""),
        var("CELLD_VAR_TOKEN", "x"),
        var("CELLD_MAX_RSS_MB", "512"),
    ];
    assert!(names(V040, &env).is_empty());
    assert_eq!(names(V051, &env), ["CELLD_OTEL_SINK"]);
    assert_eq!(names(V061, &env), ["CELLD_OTEL_SINK", "CELLD_VAR_TOKEN"]);
    let message = &refusals(V051, &env)[0].message;
    assert_eq!(
        message,
        "spec.env: celld v0.5.0 and later refuse CELLD_OTEL_SINK at startup, even empty, and spec.image ghcr.io/denoland/celld:v0.5.1 runs v0.5.1: use CELLD_OTEL=1 or CELLD_OTEL=<collector URL>"
    );
}

#[test]
fn an_empty_worker_loader_is_tolerated() {
    assert!(names(V061, &[var("CELLD_WORKER_LOADER", "")]).is_empty());
    assert_eq!(
        names(V061, &[var("CELLD_WORKER_LOADER", "on")]),
        ["CELLD_WORKER_LOADER"]
    );
}

#[test]
fn an_unknown_version_names_the_release_that_refuses() {
    let env = [var("CELLD_VARS_FILE", "/vars.json")];
    for image in [
        "ghcr.io/denoland/celld:latest",
        "ghcr.io/denoland/celld@sha256:e188a7f2bb0b8cec9fb04ee4c3d1ed7cca0ea0419519ae2a9ba36e5b6fe5161b",
    ] {
        let found = refusals(image, &env);
        assert_eq!(found.len(), 1, "{image}");
        assert!(
            found[0].message.starts_with("spec.env: celld v0.6.0 and later refuse CELLD_VARS_FILE at startup, and the version of spec.image"),
            "{}",
            found[0].message
        );
        assert!(
            found[0].message.contains("the Worker's vars"),
            "{}",
            found[0].message
        );
    }
    // A digest-pinned tag is known.
    let pinned = "ghcr.io/denoland/celld:v0.5.1@sha256:9df15352aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    assert!(names(pinned, &env).is_empty());
}

#[test]
fn v0_4_1_bounds_the_drain_token_wait_by_the_shutdown_bound() {
    // 30 s of token wait need 40 s of shutdown: the default passes, a shorter bound alone fails.
    assert!(names(V041, &[]).is_empty());
    assert!(names(V041, &[var(SHUTDOWN_TOTAL, "40000")]).is_empty());
    let short = refusals(V041, &[var(SHUTDOWN_TOTAL, "39999")]);
    assert_eq!(short.len(), 1);
    assert_eq!(
        short[0].message,
        "spec.env: celld v0.4.1 stops at startup when CELLD_DRAIN_TOKEN_WAIT_MS (30000) is above ¾ of CELLD_SHUTDOWN_TOTAL_MS (39999): set CELLD_SHUTDOWN_TOTAL_MS to at least 40000 or lower CELLD_DRAIN_TOKEN_WAIT_MS"
    );
    assert!(
        names(
            V041,
            &[var(SHUTDOWN_TOTAL, "20000"), var(DRAIN_TOKEN_WAIT, "15000")]
        )
        .is_empty()
    );
    assert_eq!(
        names(V041, &[var(DRAIN_TOKEN_WAIT, "31000")]),
        [SHUTDOWN_TOTAL]
    );
    // 0.4.0 had no such check, and from 0.5.0 the wait is derived (and the variable refused).
    assert!(names(V040, &[var(SHUTDOWN_TOTAL, "10000")]).is_empty());
    assert!(names(V051, &[var(SHUTDOWN_TOTAL, "10000")]).is_empty());
}

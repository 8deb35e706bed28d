//! `kubectl logs` of a fake pod shows the file of a kwok `Logs` rule.

use celld_testkit::{
    LogsRule, TestEnv, append_cri_log, create_running_pod, fake_pod, write_cri_log,
};
use k8s_openapi::api::core::v1::Pod;

use crate::TestResult;

#[tokio::test]
async fn logs_show_the_rules_file() -> TestResult {
    let env = TestEnv::new("logs").await?;
    create_running_pod(&env.api::<Pod>(), &fake_pod("app")).await?;
    // Before any rule: the default ClusterLogs of up.sh.
    let default = env.kubectl().run(["logs", "app"]).await?;
    assert!(default.contains("celld testenv fake runtime"), "{default}");

    let file = env.scratch_dir()?.join("app.log");
    write_cri_log(&file, &["first line", "second line"])?;
    LogsRule::for_pod("app", &file)
        .apply(&env.client(), env.namespace())
        .await?;

    assert_eq!(
        env.kubectl().run(["logs", "app"]).await?,
        "first line\nsecond line\n"
    );
    assert_eq!(
        env.kubectl().run(["logs", "app", "--tail=1"]).await?,
        "second line\n"
    );
    append_cri_log(&file, &["third line"])?;
    assert_eq!(
        env.kubectl().run(["logs", "app", "--tail=1"]).await?,
        "third line\n"
    );
    env.cleanup().await?;
    Ok(())
}

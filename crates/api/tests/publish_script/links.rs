//! Symbolic links in the Worker source, from a Flux artifact or an image's directory: one that
//! stays inside is taken, one to `/proc/self/environ` or up past the top fails the links step
//! before celld deploy runs, naming it.

use std::collections::HashMap;
use std::os::unix::fs::symlink;

use celld_api::contract::publish::Step;

use crate::files::{project, sha256, tar_gz};
use crate::script_run::Run;
use crate::server::Server;

/// The links that lead out of `app`, and where.
const OUTSIDE: [(&str, &str); 2] = [
    ("src/env.js", "/proc/self/environ"),
    ("src/up.js", "../../escape.txt"),
];

#[test]
fn a_link_out_of_an_image_source_fails_before_celld_deploy_runs() {
    for (name, target) in OUTSIDE {
        let run = Run::new();
        let root = run.path("volume");
        project(&root);
        let app = root.join("project/app");
        symlink("index.js", app.join("src/main.js")).unwrap();
        symlink(target, app.join(name)).unwrap();
        let (_run, ran) = run.run(&app);
        ran.assert_failed(Step::Links, 1);
        assert!(
            ran.message().starts_with(&format!(
                "{name} in the Worker source is a symbolic link to {target}, outside it"
            )),
            "{}",
            ran.message()
        );
        assert_eq!(ran.runs, 0, "celld deploy never ran");
    }
    // A link inside is taken.
    let run = Run::new();
    let root = run.path("volume");
    project(&root);
    let app = root.join("project/app");
    symlink("index.js", app.join("src/main.js")).unwrap();
    let (_run, ran) = run.run(&app);
    assert!(ran.result.is_published(), "{:?}", ran.result);
}

#[test]
fn a_link_out_of_a_flux_artifact_fails_before_celld_deploy_runs() {
    for (name, target) in OUTSIDE {
        let dir = tempfile::tempdir().unwrap();
        let members = project(&dir.path().join("p"));
        let app = dir.path().join("p/project/app");
        symlink(target, app.join(name)).unwrap();
        let artifact = tar_gz(&dir.path().join("p/project"), &members);
        let digest = sha256(&artifact);
        let server = Server::start(HashMap::from([("/a.tar.gz".to_owned(), artifact)]));
        let run = Run::new().artifact(server.url("/a.tar.gz"), digest);
        let app = run.work().join("src/app");
        let (_run, ran) = run.run(&app);
        ran.assert_failed(Step::Links, 1);
        assert!(
            ran.message().starts_with(&format!(
                "{name} in the Worker source is a symbolic link to {target}, outside it"
            )),
            "{}",
            ran.message()
        );
        assert_eq!(ran.runs, 0, "celld deploy never ran");
    }
}

//! The project's CRDs and admission policies, as checked in under `config/crd/bases` and
//! `config/admission` (what users install).

use crate::error::{Error, Result};
use crate::paths;
use crate::wait::{Check, DEFAULT_TIMEOUT, wait_until};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Patch, PatchParams};
use kube::{Api, Client};

/// Applies (server-side, idempotent) every CRD in `config/crd/bases` and waits until the API
/// server serves each one, then the admission policies of `config/admission`.
pub async fn install_crds(client: &Client) -> Result<()> {
    install_definitions(client).await?;
    install_admission(client).await
}

/// Applies the ValidatingAdmissionPolicies and their bindings of `config/admission`.
async fn install_admission(client: &Client) -> Result<()> {
    use k8s_openapi::api::admissionregistration::v1::{
        ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
    };
    use serde::Deserialize;
    let path = paths::workspace_root().join("config/admission/previews.yaml");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| Error::io("reading the admission policies", &path, e))?;
    let params = PatchParams::apply("celld-testkit").force();
    let invalid = || Error::Invalid {
        what: "admission policy file",
        value: path.display().to_string(),
        reason: "holds something else than ValidatingAdmissionPolicies and their bindings; run `make manifests`",
    };
    for document in serde_yaml::Deserializer::from_str(&text) {
        let value = serde_json::Value::deserialize(document).map_err(|_| invalid())?;
        let name = value["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        match value["kind"].as_str() {
            Some("ValidatingAdmissionPolicy") => {
                let policy: ValidatingAdmissionPolicy =
                    serde_json::from_value(value).map_err(|_| invalid())?;
                Api::<ValidatingAdmissionPolicy>::all(client.clone())
                    .patch(&name, &params, &Patch::Apply(&policy))
                    .await
                    .map_err(|e| {
                        Error::kube(format!("installing ValidatingAdmissionPolicy {name}"), e)
                    })?;
            }
            Some("ValidatingAdmissionPolicyBinding") => {
                let binding: ValidatingAdmissionPolicyBinding =
                    serde_json::from_value(value).map_err(|_| invalid())?;
                Api::<ValidatingAdmissionPolicyBinding>::all(client.clone())
                    .patch(&name, &params, &Patch::Apply(&binding))
                    .await
                    .map_err(|e| {
                        Error::kube(
                            format!("installing ValidatingAdmissionPolicyBinding {name}"),
                            e,
                        )
                    })?;
            }
            _ => return Err(invalid()),
        }
    }
    Ok(())
}

/// Applies every CRD in `config/crd/bases` and waits until the API server serves each one.
async fn install_definitions(client: &Client) -> Result<()> {
    let dir = paths::workspace_root().join("config/crd/bases");
    let entries = std::fs::read_dir(&dir).map_err(|e| Error::io("listing the CRDs", &dir, e))?;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let params = PatchParams::apply("celld-testkit").force();
    for entry in entries {
        let path = entry
            .map_err(|e| Error::io("listing the CRDs", &dir, e))?
            .path();
        let text =
            std::fs::read_to_string(&path).map_err(|e| Error::io("reading a CRD", &path, e))?;
        let crd: CustomResourceDefinition =
            serde_yaml::from_str(&text).map_err(|_| Error::Invalid {
                what: "CRD file",
                value: path.display().to_string(),
                reason: "is not one CustomResourceDefinition; run `make manifests`",
            })?;
        let name = crd.metadata.name.clone().unwrap_or_default();
        crds.patch(&name, &params, &Patch::Apply(&crd))
            .await
            .map_err(|e| Error::kube(format!("installing CRD {name}"), e))?;
        let crds = &crds;
        let name = &name;
        wait_until(
            format!("CRD {name} to be established"),
            DEFAULT_TIMEOUT,
            || async move {
                match crds.get(name).await {
                    Ok(c)
                        if c.status
                            .as_ref()
                            .and_then(|s| s.conditions.as_ref())
                            .is_some_and(|cs| {
                                cs.iter()
                                    .any(|c| c.type_ == "Established" && c.status == "True")
                            }) =>
                    {
                        Check::Done(())
                    }
                    Ok(c) => Check::Pending(format!("{:?}", c.status)),
                    Err(e) => Check::Pending(e.to_string()),
                }
            },
        )
        .await?;
    }
    Ok(())
}

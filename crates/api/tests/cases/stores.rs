//! CelldObjectStore cases.

use super::{Case, bad, ok};

pub const STORES: &[Case] = &[
    ok(
        "store-minio",
        r#"
metadata: {name: minio}
spec: {endpoint: "http://minio.celld-poc.svc:9000", region: us-east-1, allowHTTP: true, credentialsSecretRef: {name: creds}}
"#,
    ),
    ok(
        "store-aws",
        r#"
metadata: {name: aws}
spec: {credentialsSecretRef: {name: creds}}
"#,
    ),
    bad(
        "store-http-without-allow",
        r#"
metadata: {name: http}
spec: {endpoint: "http://minio:9000", credentialsSecretRef: {name: creds}}
"#,
        "set spec.allowHTTP: true",
    ),
    ok(
        "store-workload-identity",
        r#"
metadata: {name: identity}
spec: {region: eu-west-1}
"#,
    ),
    ok(
        "store-azure",
        r#"
metadata: {name: azure}
spec: {azureStorageAccount: companycelld, credentialsSecretRef: {name: azure-key}}
"#,
    ),
    bad(
        "store-azure-with-endpoint",
        r#"
metadata: {name: azure-endpoint}
spec: {azureStorageAccount: companycelld, endpoint: "https://blob.example.com"}
"#,
        "spec.azureStorageAccount makes this an Azure Blob Storage connection, which takes no spec.endpoint",
    ),
    bad(
        "store-azure-with-region",
        r#"
metadata: {name: azure-region}
spec: {azureStorageAccount: companycelld, region: westeurope}
"#,
        "spec.azureStorageAccount makes this an Azure Blob Storage connection, which takes no spec.endpoint, spec.region or spec.allowHTTP",
    ),
    bad(
        "store-azure-with-allow-http",
        r#"
metadata: {name: azure-http}
spec: {azureStorageAccount: companycelld, allowHTTP: true}
"#,
        "spec.azureStorageAccount makes this an Azure Blob Storage connection, which takes no spec.endpoint, spec.region or spec.allowHTTP",
    ),
    bad(
        "store-secret-name-underscore",
        r#"
metadata: {name: secret-name}
spec: {credentialsSecretRef: {name: s3_creds}}
"#,
        "credentialsSecretRef.name must be the name of a Secret",
    ),
    bad(
        "store-bad-endpoint",
        r#"
metadata: {name: bad-endpoint}
spec: {endpoint: "s3.example.com", credentialsSecretRef: {name: creds}}
"#,
        "spec.endpoint must be an absolute http:// or https:// URL",
    ),
];

//! Cases of where a fleet's Worker code lives: the bucket, its provider (S3, GCS, Azure Blob),
//! credentials inline or through a CelldObjectStore, workload identity and endpoints.

use super::{Case, bad, ok};

pub const CASES: &[Case] = &[
    ok(
        "workload-identity-s3",
        r#"
metadata: {name: irsa}
spec:
  objectStorage: {bucket: "s3://celld/app", region: eu-west-1}
  serviceAccountName: celld
"#,
    ),
    ok(
        "gcs-with-key",
        r#"
metadata: {name: gcs}
spec:
  objectStorage: {bucket: "gs://company_celld/api", credentialsSecretRef: {name: gcs-key}}
"#,
    ),
    ok(
        "gcs-workload-identity",
        r#"
metadata: {name: gcs-wi}
spec:
  objectStorage: {bucket: "gs://company-celld"}
  serviceAccountName: celld
"#,
    ),
    ok(
        "azure-with-key",
        r#"
metadata: {name: azure}
spec:
  objectStorage: {bucket: "az://workers/api", azureStorageAccount: companycelld, credentialsSecretRef: {name: azure-key}}
"#,
    ),
    ok(
        "azure-through-store",
        r#"
metadata: {name: azure-store}
spec:
  storeRef: {name: azure}
  objectStorage: {bucket: "az://workers/api"}
"#,
    ),
    ok(
        "bucket-without-scheme-is-s3",
        r#"
metadata: {name: bucket-scheme}
spec:
  objectStorage: {bucket: "celld/app", credentialsSecretRef: {name: creds}}
"#,
    ),
    bad(
        "gcs-with-endpoint",
        r#"
metadata: {name: gcs-endpoint}
spec:
  objectStorage: {bucket: "gs://celld/app", endpoint: "https://storage.example.com"}
"#,
        "spec.objectStorage.endpoint applies to S3 buckets only: celld refuses it with gs:// and az:// buckets, so remove spec.objectStorage.endpoint",
    ),
    bad(
        "azure-with-endpoint",
        r#"
metadata: {name: azure-endpoint}
spec:
  objectStorage: {bucket: "az://workers/app", azureStorageAccount: companycelld, endpoint: "https://blob.example.com"}
"#,
        "spec.objectStorage.endpoint applies to S3 buckets only: celld refuses it with gs:// and az:// buckets, so remove spec.objectStorage.endpoint",
    ),
    bad(
        "gcs-with-region",
        r#"
metadata: {name: gcs-region}
spec:
  objectStorage: {bucket: "gs://celld/app", region: europe-west1}
"#,
        "spec.objectStorage.region applies to S3 buckets only",
    ),
    bad(
        "azure-with-allow-http",
        r#"
metadata: {name: azure-http}
spec:
  objectStorage: {bucket: "az://workers/app", azureStorageAccount: companycelld, allowHTTP: false}
"#,
        "spec.objectStorage.allowHTTP applies to S3 buckets only",
    ),
    bad(
        "azure-with-region",
        r#"
metadata: {name: azure-region}
spec:
  objectStorage: {bucket: "az://workers/app", azureStorageAccount: companycelld, region: westeurope}
"#,
        "spec.objectStorage.region applies to S3 buckets only",
    ),
    bad(
        "gcs-with-allow-http",
        r#"
metadata: {name: gcs-http}
spec:
  objectStorage: {bucket: "gs://celld/app", allowHTTP: true}
"#,
        "spec.objectStorage.allowHTTP applies to S3 buckets only",
    ),
    bad(
        "azure-without-account",
        r#"
metadata: {name: azure-no-account}
spec:
  objectStorage: {bucket: "az://workers/app"}
"#,
        "an az:// bucket needs spec.objectStorage.azureStorageAccount",
    ),
    bad(
        "account-with-s3-bucket",
        r#"
metadata: {name: s3-account}
spec:
  objectStorage: {bucket: "s3://celld/app", azureStorageAccount: companycelld, credentialsSecretRef: {name: creds}}
"#,
        "spec.objectStorage.azureStorageAccount applies to az:// buckets only",
    ),
    bad(
        "store-and-account",
        r#"
metadata: {name: store-account}
spec:
  storeRef: {name: azure}
  objectStorage: {bucket: "az://workers/app", azureStorageAccount: companycelld}
"#,
        "spec.storeRef excludes spec.objectStorage.endpoint, region, allowHTTP and azureStorageAccount",
    ),
    bad(
        "azure-account-uppercase",
        r#"
metadata: {name: azure-upper}
spec:
  objectStorage: {bucket: "az://workers/app", azureStorageAccount: CompanyCelld}
"#,
        "spec.objectStorage.azureStorageAccount must be an Azure storage account name",
    ),
    bad(
        "azure-container-double-dash",
        r#"
metadata: {name: azure-dash}
spec:
  objectStorage: {bucket: "az://work--ers/app", azureStorageAccount: companycelld}
"#,
        "spec.objectStorage.bucket must be [s3://|gs://|az://]NAME[/PREFIX]",
    ),
    bad(
        "azure-container-too-long",
        r#"
metadata: {name: azure-long}
spec:
  objectStorage: {bucket: "az://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/app", azureStorageAccount: companycelld}
"#,
        "spec.objectStorage.bucket must be [s3://|gs://|az://]NAME[/PREFIX]",
    ),
    bad(
        "gcs-uppercase-name",
        r#"
metadata: {name: gcs-upper}
spec:
  objectStorage: {bucket: "gs://Celld/app"}
"#,
        "spec.objectStorage.bucket must be [s3://|gs://|az://]NAME[/PREFIX]",
    ),
    bad(
        "unknown-scheme",
        r#"
metadata: {name: https-bucket}
spec:
  objectStorage: {bucket: "https://celld/app"}
"#,
        "spec.objectStorage.bucket must be [s3://|gs://|az://]NAME[/PREFIX]",
    ),
    bad(
        "store-and-inline-credentials",
        r#"
metadata: {name: both}
spec:
  storeRef: {name: minio}
  objectStorage: {bucket: "s3://celld/app", credentialsSecretRef: {name: creds}}
"#,
        "spec.storeRef excludes spec.objectStorage.credentialsSecretRef",
    ),
    bad(
        "store-and-endpoint",
        r#"
metadata: {name: store-endpoint}
spec:
  storeRef: {name: minio}
  objectStorage: {bucket: "s3://celld/app", endpoint: "https://s3.example.com"}
"#,
        "spec.storeRef excludes spec.objectStorage.endpoint",
    ),
    bad(
        "store-and-region",
        r#"
metadata: {name: store-region}
spec:
  storeRef: {name: minio}
  objectStorage: {bucket: "s3://celld/app", region: eu-west-1}
"#,
        "spec.storeRef excludes spec.objectStorage.endpoint, region, allowHTTP and azureStorageAccount",
    ),
    bad(
        "bucket-bad-prefix-chars",
        r#"
metadata: {name: bucket-chars}
spec:
  objectStorage: {bucket: "s3://celld/app name", credentialsSecretRef: {name: creds}}
"#,
        "spec.objectStorage.bucket must be [s3://|gs://|az://]NAME[/PREFIX]",
    ),
    bad(
        "bucket-trailing-slash",
        r#"
metadata: {name: bucket-slash}
spec:
  objectStorage: {bucket: "s3://celld/app/", credentialsSecretRef: {name: creds}}
"#,
        "spec.objectStorage.bucket must be [s3://|gs://|az://]NAME[/PREFIX]",
    ),
    bad(
        "bucket-uppercase-name",
        r#"
metadata: {name: bucket-upper}
spec:
  objectStorage: {bucket: "s3://Celld/app", credentialsSecretRef: {name: creds}}
"#,
        "spec.objectStorage.bucket must be [s3://|gs://|az://]NAME[/PREFIX]",
    ),
    bad(
        "endpoint-not-url",
        r#"
metadata: {name: endpoint-url}
spec:
  objectStorage: {bucket: "s3://celld/app", endpoint: "minio:9000", credentialsSecretRef: {name: creds}}
"#,
        "spec.objectStorage.endpoint must be an absolute http:// or https:// URL",
    ),
    bad(
        "endpoint-http-without-allow",
        r#"
metadata: {name: endpoint-http}
spec:
  objectStorage: {bucket: "s3://celld/app", endpoint: "http://minio:9000", credentialsSecretRef: {name: creds}}
"#,
        "set spec.objectStorage.allowHTTP: true",
    ),
    bad(
        "endpoint-http-allow-false",
        r#"
metadata: {name: endpoint-http-false}
spec:
  objectStorage: {bucket: "s3://celld/app", endpoint: "http://minio:9000", allowHTTP: false, credentialsSecretRef: {name: creds}}
"#,
        "set spec.objectStorage.allowHTTP: true",
    ),
];

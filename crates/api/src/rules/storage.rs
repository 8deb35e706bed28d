//! Object storage: the bucket, endpoint, region and account a fleet or store names, as the
//! stores celld reads accept them.

use kube::core::Rule;

/// Rule: an http:// endpoint needs allowHTTP (`at` is the object's path, for the message).
pub fn allow_http_rule(at: &str) -> Rule {
    Rule::new("!has(self.endpoint) || !self.endpoint.startsWith('http://') || (has(self.allowHTTP) && self.allowHTTP)")
        .message(format!("{at}.endpoint uses plain-text http://: set {at}.allowHTTP: true to allow it, or use an https:// endpoint").as_str())
}

/// Rule: an endpoint is an absolute http(s) URL without query or fragment.
pub fn endpoint_rule(at: &str) -> Rule {
    Rule::new(r"self.matches('^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[^?#\\s]*)?$')").message(
        format!("{at} must be an absolute http:// or https:// URL such as https://s3.example.com (host, optional port and path; no query)").as_str(),
    )
}

/// Rule: a region is lowercase letters, digits and dashes (us-east-1, auto).
pub fn region_rule(at: &str) -> Rule {
    Rule::new("self.matches('^[a-z0-9-]+$')")
        .message(format!("{at} must be a region name such as us-east-1 (or auto for R2)").as_str())
}

/// Rule: a bucket is `[s3://|gs://|az://]NAME[/PREFIX]` (no scheme is S3, as in celld) with a
/// bucket or container name valid for its store and celld's prefix characters.
pub fn bucket_rule(at: &str) -> Rule {
    const PREFIX: &str = "(/[A-Za-z0-9._-]+)*$";
    Rule::new(format!(
        "self.matches('^(s3://)?[a-z0-9][a-z0-9.-]{{1,61}}[a-z0-9]{PREFIX}') \
         || self.matches('^gs://[a-z0-9][a-z0-9._-]{{1,61}}[a-z0-9]{PREFIX}') \
         || (self.matches('^az://[a-z0-9](-?[a-z0-9]){{2,62}}{PREFIX}') && self.matches('^az://[^/]{{3,63}}(/|$)'))"
    ))
    .message(
        format!("{at} must be [s3://|gs://|az://]NAME[/PREFIX] (no scheme means S3): NAME is an S3 or GCS bucket name (3-63 lowercase letters, digits, '.', '-'; GCS also '_') or an Azure container name (3-63 lowercase letters, digits and single '-'), PREFIX uses A-Z a-z 0-9 - _ . and / between non-empty parts, for example s3://company-celld/api, gs://company-celld/api or az://celld/api").as_str(),
    )
}

/// Rule on an object with a `bucket`: its S3-only `field` is not set with a gs:// or az://
/// bucket (`at` is the object's path, for the message).
pub fn s3_only_rule(at: &str, field: &str) -> Rule {
    Rule::new(format!(
        "!(self.bucket.startsWith('gs://') || self.bucket.startsWith('az://')) || !has(self.{field})"
    ))
    .message(
        format!("{at}.{field} applies to S3 buckets only: celld refuses it with gs:// and az:// buckets, so remove {at}.{field}").as_str(),
    )
}

/// Rule: an Azure storage account name is 3-24 lowercase letters and digits.
pub fn azure_account_rule(at: &str) -> Rule {
    Rule::new("self.matches('^[a-z0-9]{3,24}$')").message(
        format!("{at} must be an Azure storage account name: 3-24 lowercase letters and digits, such as companycelld").as_str(),
    )
}

//! The S3 server of the local control plane honours conditional writes, and lists recursively
//! when a client sends an empty delimiter.

use aws_sdk_s3::primitives::ByteStream;
use celld_testkit::S3Settings;

use crate::TestResult;

#[tokio::test]
async fn put_object_if_none_match_star_refuses_an_existing_key_with_412() -> TestResult {
    let settings = S3Settings::load()?;
    assert!(
        settings.endpoint.starts_with("http://127.0.0.1:"),
        "{settings:?}"
    );
    let s3 = settings.client();
    let key = format!("{}object", settings.unique_prefix("if-none-match"));

    s3.put_object()
        .bucket(&settings.bucket)
        .key(&key)
        .if_none_match("*")
        .body(ByteStream::from_static(b"first"))
        .send()
        .await?;

    let second = s3
        .put_object()
        .bucket(&settings.bucket)
        .key(&key)
        .if_none_match("*")
        .body(ByteStream::from_static(b"second"))
        .send()
        .await
        .expect_err("a second create of the same key must be refused");
    let status = second.raw_response().map(|r| r.status().as_u16());
    assert_eq!(status, Some(412), "{second:?}");

    let body = s3
        .get_object()
        .bucket(&settings.bucket)
        .key(&key)
        .send()
        .await?;
    let bytes = body.body.collect().await?.into_bytes();
    assert_eq!(&bytes[..], b"first");
    s3.delete_object()
        .bucket(&settings.bucket)
        .key(&key)
        .send()
        .await?;
    Ok(())
}

#[tokio::test]
async fn put_object_if_match_refuses_a_stale_etag_with_412_and_takes_the_current_one() -> TestResult
{
    let settings = S3Settings::load()?;
    let s3 = settings.client();
    let key = format!("{}pointer", settings.unique_prefix("if-match"));
    let put = |body: &'static [u8]| {
        s3.put_object()
            .bucket(&settings.bucket)
            .key(&key)
            .body(ByteStream::from_static(body))
    };
    let first = put(b"first").send().await?;
    let first_etag = first.e_tag().expect("an ETag").to_string();
    let second = put(b"second").if_match(&first_etag).send().await?;
    let second_etag = second.e_tag().expect("an ETag").to_string();
    assert_ne!(first_etag, second_etag);

    let stale = put(b"third")
        .if_match(&first_etag)
        .send()
        .await
        .expect_err("a write with a stale ETag must be refused");
    let status = stale.raw_response().map(|r| r.status().as_u16());
    assert_eq!(status, Some(412), "{stale:?}");

    let absent = s3
        .put_object()
        .bucket(&settings.bucket)
        .key(format!("{key}-absent"))
        .if_match(&second_etag)
        .body(ByteStream::from_static(b"x"))
        .send()
        .await
        .expect_err("If-Match on a missing key must be refused");
    let status = absent.raw_response().map(|r| r.status().as_u16());
    assert!(matches!(status, Some(404 | 412)), "{absent:?}");

    let body = s3
        .get_object()
        .bucket(&settings.bucket)
        .key(&key)
        .send()
        .await?;
    let bytes = body.body.collect().await?.into_bytes();
    assert_eq!(&bytes[..], b"second");
    s3.delete_object()
        .bucket(&settings.bucket)
        .key(&key)
        .send()
        .await?;
    Ok(())
}

#[tokio::test]
async fn an_empty_delimiter_lists_every_object_under_the_prefix() -> TestResult {
    // minio-go (Flux's generic Bucket provider) sends `delimiter=` for a recursive listing; AWS
    // S3 takes it for no delimiter. Unpatched, s3s-fs grouped the keys by the empty string.
    let settings = S3Settings::load()?;
    let s3 = settings.client();
    let prefix = settings.unique_prefix("empty-delimiter");
    let keys = [format!("{prefix}a/b.txt"), format!("{prefix}c.txt")];
    for key in &keys {
        s3.put_object()
            .bucket(&settings.bucket)
            .key(key)
            .body(ByteStream::from_static(b"x"))
            .send()
            .await?;
    }
    let listed = s3
        .list_objects_v2()
        .bucket(&settings.bucket)
        .prefix(&prefix)
        .delimiter("")
        .send()
        .await?;
    let mut got: Vec<String> = listed
        .contents()
        .iter()
        .filter_map(|o| o.key().map(str::to_owned))
        .collect();
    got.sort();
    assert_eq!(got, keys, "{listed:?}");
    assert!(listed.common_prefixes().is_empty(), "{listed:?}");
    for key in &keys {
        s3.delete_object()
            .bucket(&settings.bucket)
            .key(key)
            .send()
            .await?;
    }
    Ok(())
}

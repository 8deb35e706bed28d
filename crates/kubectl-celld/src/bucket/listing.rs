//! A page of S3's ListObjectsV2 answer: the keys, their time and size, and whether more pages
//! follow. The answer is flat XML; only the elements used here are read.

/// One listed object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// Its full key.
    pub key: String,
    /// `LastModified` (RFC 3339).
    pub last_modified: Option<String>,
    /// Its size in bytes.
    pub size: u64,
}

/// One page.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Page {
    /// The objects.
    pub objects: Vec<Listed>,
    /// The token of the next page, when the listing is truncated.
    pub next: Option<String>,
}

/// The text of the first `<name>...</name>` in `xml`, entities decoded.
fn element(xml: &str, name: &str) -> Option<String> {
    let open = format!("<{name}>");
    let close = format!("</{name}>");
    let start = xml.find(&open)? + open.len();
    let end = xml[start..].find(&close)? + start;
    Some(unescape(&xml[start..end]))
}

/// XML's five predefined entities and numeric character references.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let tail = &rest[amp..];
        let Some(semi) = tail.find(';') else {
            out.push_str(tail);
            return out;
        };
        let entity = &tail[1..semi];
        let decoded = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => entity
                .strip_prefix("#x")
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .or_else(|| entity.strip_prefix('#').and_then(|d| d.parse().ok()))
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => out.push(c),
            None => out.push_str(&tail[..=semi]),
        }
        rest = &tail[semi + 1..];
    }
    out.push_str(rest);
    out
}

/// Parses a ListObjectsV2 answer.
pub fn parse(xml: &str) -> Page {
    let mut objects = Vec::new();
    let mut rest = xml;
    while let Some(start) = rest.find("<Contents>") {
        let body = &rest[start + "<Contents>".len()..];
        let end = body.find("</Contents>").unwrap_or(body.len());
        let entry = &body[..end];
        if let Some(key) = element(entry, "Key") {
            objects.push(Listed {
                key,
                last_modified: element(entry, "LastModified"),
                size: element(entry, "Size")
                    .and_then(|s| s.trim().parse().ok())
                    .unwrap_or(0),
            });
        }
        rest = &body[end..];
    }
    let truncated = element(xml, "IsTruncated").is_some_and(|t| t.trim() == "true");
    Page {
        objects,
        next: element(xml, "NextContinuationToken").filter(|_| truncated),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_page() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>celld</Name><Prefix>web/deploy/</Prefix><KeyCount>2</KeyCount><IsTruncated>true</IsTruncated><NextContinuationToken>a+b/c=</NextContinuationToken><Contents><Key>web/deploy/current.json</Key><LastModified>2026-11-30T15:19:28.980Z</LastModified><Size>8</Size></Contents><Contents><Key>web/deploy/w/ab/R&amp;D.js</Key><LastModified>2026-11-30T15:19:29.000Z</LastModified><ETag>"x"</ETag><Size>120</Size></Contents></ListBucketResult>"#;
        let page = parse(xml);
        assert_eq!(page.next.as_deref(), Some("a+b/c="));
        assert_eq!(page.objects.len(), 2);
        assert_eq!(page.objects[1].key, "web/deploy/w/ab/R&D.js");
        assert_eq!(page.objects[1].size, 120);
        assert_eq!(
            page.objects[0].last_modified.as_deref(),
            Some("2026-11-30T15:19:28.980Z")
        );
        let last = parse("<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>");
        assert_eq!(last, Page::default());
        assert_eq!(unescape("&#x41;&#66;&bogus;"), "AB&bogus;");
    }
}

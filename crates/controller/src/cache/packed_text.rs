//! The JSON text a [`Compact`](super::compact::Compact) object keeps, deflated when that makes
//! it smaller. A child's text is read only when the child is compared with its fleet's plan,
//! and kept for as long as the child lives: a StatefulSet's 3 KB of JSON deflates to about
//! 1.2 KB, a Service's 640 bytes to about 340, for some tens of microseconds per watch event.

use flate2::Compression;
use flate2::read::DeflateDecoder;
use flate2::write::DeflateEncoder;
use std::borrow::Cow;
use std::fmt;
use std::io::{Read, Write};

/// Texts shorter than this are kept as they are: deflating them saves next to nothing.
const WORTH_DEFLATING: usize = 128;

/// JSON text, kept as it came or deflated, whichever is smaller.
#[derive(Clone, PartialEq, Eq)]
pub enum PackedText {
    /// The text itself.
    Plain(Box<str>),
    /// The text deflated (raw DEFLATE, no header).
    Deflated(Box<[u8]>),
}

impl PackedText {
    /// `text`, deflated when that is smaller.
    pub fn pack(text: String) -> Self {
        if text.len() < WORTH_DEFLATING {
            return Self::Plain(text.into_boxed_str());
        }
        match deflate(text.as_bytes()) {
            Some(packed) if packed.len() < text.len() => Self::Deflated(packed.into_boxed_slice()),
            _ => Self::Plain(text.into_boxed_str()),
        }
    }

    /// The text.
    pub fn text(&self) -> Result<Cow<'_, str>, serde_json::Error> {
        match self {
            Self::Plain(text) => Ok(Cow::Borrowed(text)),
            Self::Deflated(packed) => {
                let mut text = String::with_capacity(packed.len() * 3);
                DeflateDecoder::new(&packed[..])
                    .read_to_string(&mut text)
                    .map_err(serde_json::Error::io)?;
                Ok(Cow::Owned(text))
            }
        }
    }
}

impl fmt::Debug for PackedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.text() {
            Ok(text) => fmt::Debug::fmt(&text, f),
            Err(e) => write!(f, "<deflated text that does not inflate: {e}>"),
        }
    }
}

/// `bytes` deflated; None if the encoder failed (writing to memory, it does not).
fn deflate(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut encoder = DeflateEncoder::new(Vec::with_capacity(bytes.len() / 2), Compression::fast());
    encoder.write_all(bytes).ok()?;
    encoder.finish().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn statefulset_text() -> String {
        let container = r#"{"name":"celld","image":"ghcr.io/denoland/celld:v0.6.1","ports":[{"name":"http","containerPort":8080,"protocol":"TCP"},{"name":"internal","containerPort":8081,"protocol":"TCP"}],"readinessProbe":{"httpGet":{"path":"/_celld/health","port":"http","scheme":"HTTP"},"periodSeconds":5}}"#;
        format!(
            r#""spec":{{"replicas":2,"template":{{"spec":{{"containers":[{container}],"initContainers":[{container}]}}}}}},"status":{{"replicas":2,"readyReplicas":2}}"#
        )
    }

    #[test]
    fn a_long_text_is_deflated_and_reads_back_the_same() {
        let text = statefulset_text();
        let packed = PackedText::pack(text.clone());
        let PackedText::Deflated(bytes) = &packed else {
            panic!("not deflated: {packed:?}");
        };
        assert!(
            bytes.len() < text.len() / 2,
            "{} of {}",
            bytes.len(),
            text.len()
        );
        assert_eq!(packed.text().unwrap(), text);
    }

    #[test]
    fn a_short_text_is_kept_as_it_is() {
        let packed = PackedText::pack(r#""spec":{"a":1}"#.to_string());
        assert_eq!(packed, PackedText::Plain(r#""spec":{"a":1}"#.into()));
        assert_eq!(packed.text().unwrap(), r#""spec":{"a":1}"#);
        assert_eq!(
            PackedText::pack(String::new()),
            PackedText::Plain("".into())
        );
    }

    #[test]
    fn a_text_that_does_not_shrink_is_kept_as_it_is() {
        // Just long enough to try, with no repeats: DEFLATE's headers cost more than it saves.
        let mut seed = 7u32;
        let text: String = (0..WORTH_DEFLATING + 2)
            .map(|_| {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                char::from(b'!' + ((seed >> 16) % 90) as u8)
            })
            .collect();
        assert!(matches!(PackedText::pack(text.clone()), PackedText::Plain(t) if *t == text));
    }

    #[test]
    fn text_that_does_not_inflate_is_an_error_not_a_panic() {
        let broken = PackedText::Deflated(vec![0xff; 16].into_boxed_slice());
        assert!(broken.text().is_err());
        assert!(format!("{broken:?}").contains("does not inflate"));
    }
}

//! Follows the audit log while the API server writes it: each call reads the lines added since
//! the last one.

use crate::audit::UserRequests;
use crate::error::{Error, Result};
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;

/// Reads one user's requests from an audit log, incrementally.
#[derive(Debug)]
pub struct AuditTail {
    path: PathBuf,
    username: String,
    offset: u64,
    partial: Vec<u8>,
    requests: UserRequests,
}

impl AuditTail {
    /// Follows `path` for the requests of `username` (the file may not exist yet).
    pub fn new(path: impl Into<PathBuf>, username: impl Into<String>) -> Self {
        AuditTail {
            path: path.into(),
            username: username.into(),
            offset: 0,
            partial: Vec::new(),
            requests: UserRequests::default(),
        }
    }

    /// Reads what was appended since the last call; a line not ended yet waits for the next.
    pub fn poll(&mut self) -> Result<&UserRequests> {
        let mut file = match std::fs::File::open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(&self.requests),
            Err(e) => return Err(Error::io("opening the audit log", &self.path)(e)),
        };
        file.seek(SeekFrom::Start(self.offset))
            .map_err(Error::io("reading the audit log", &self.path))?;
        let mut added = Vec::new();
        file.read_to_end(&mut added)
            .map_err(Error::io("reading the audit log", &self.path))?;
        self.offset += added.len() as u64;
        self.partial.extend_from_slice(&added);
        let complete = match self.partial.iter().rposition(|&b| b == b'\n') {
            Some(end) => end + 1,
            None => return Ok(&self.requests),
        };
        let lines: Vec<u8> = self.partial.drain(..complete).collect();
        for line in String::from_utf8_lossy(&lines).lines() {
            self.requests.add_line(&self.username, line);
        }
        Ok(&self.requests)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn event(id: &str, verb: &str) -> String {
        format!(
            r#"{{"auditID":"{id}","verb":"{verb}","user":{{"username":"op"}},"responseStatus":{{"code":200}},"requestReceivedTimestamp":"2026-01-01T00:00:01Z"}}"#
        )
    }

    #[test]
    fn lines_are_read_as_they_are_completed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.log");
        let mut tail = AuditTail::new(&path, "op");
        assert_eq!(tail.poll().unwrap().requests().count(), 0, "no file yet");

        let mut file = std::fs::File::create(&path).unwrap();
        let second = event("b", "patch");
        let (head, rest) = second.split_at(20);
        write!(file, "{}\n{head}", event("a", "get")).unwrap();
        file.flush().unwrap();
        assert_eq!(
            tail.poll().unwrap().requests().count(),
            1,
            "half a line waits"
        );

        writeln!(file, "{rest}").unwrap();
        file.flush().unwrap();
        let requests = tail.poll().unwrap();
        assert_eq!(requests.requests().count(), 2);
        assert_eq!(requests.requests().filter(|r| r.is_write()).count(), 1);
    }
}

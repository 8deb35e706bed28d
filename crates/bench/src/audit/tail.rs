//! Follows the audit log while the API server writes it: each call reads the lines added since
//! the last one, a chunk at a time (the log of a large run takes gigabytes).

use super::event::Event;
use super::server::ServerRequests;
use super::user::UserRequests;
use crate::error::{Error, Result};
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;

/// How much of the log is read at once.
const CHUNK: usize = 8 << 20;

/// Reads one user's requests from an audit log, incrementally, and, when asked, every user's.
#[derive(Debug)]
pub struct AuditTail {
    path: PathBuf,
    username: String,
    offset: u64,
    partial: Vec<u8>,
    requests: UserRequests,
    server: Option<ServerRequests>,
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
            server: None,
        }
    }

    /// Also gathers every user's requests, for the API server's load
    /// ([`AuditTail::server`]); every line is parsed then, not only the user's.
    pub fn with_server_load(mut self) -> Self {
        self.server = Some(ServerRequests::default());
        self
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
        let mut chunk = vec![0; CHUNK];
        loop {
            let read = file
                .read(&mut chunk)
                .map_err(Error::io("reading the audit log", &self.path))?;
            if read == 0 {
                break;
            }
            self.offset += read as u64;
            self.partial.extend_from_slice(&chunk[..read]);
            self.take_lines();
        }
        Ok(&self.requests)
    }

    /// Every user's requests read so far; `None` unless asked for with
    /// [`AuditTail::with_server_load`].
    pub fn server(&self) -> Option<&ServerRequests> {
        self.server.as_ref()
    }

    /// Reads the complete lines gathered so far.
    fn take_lines(&mut self) {
        let Some(end) = self.partial.iter().rposition(|&b| b == b'\n') else {
            return;
        };
        let lines: Vec<u8> = self.partial.drain(..=end).collect();
        for line in lines.split(|&b| b == b'\n') {
            if let Ok(text) = std::str::from_utf8(line) {
                self.read_line(text);
            }
        }
    }

    fn read_line(&mut self, line: &str) {
        // Without the server's load, most lines are other users': skip them without parsing.
        if self.server.is_none() && !line.contains(self.username.as_str()) {
            return;
        }
        let Some(event) = Event::parse(line) else {
            return;
        };
        if let Some(server) = &mut self.server {
            server.add(&event);
        }
        if event.username == self.username {
            self.requests.add(&event);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn event(id: &str, user: &str, verb: &str) -> String {
        format!(
            r#"{{"auditID":"{id}","stage":"ResponseComplete","verb":"{verb}","user":{{"username":"{user}"}},"responseStatus":{{"code":200}},"requestReceivedTimestamp":"2026-01-01T00:00:01Z","stageTimestamp":"2026-01-01T00:00:01.002Z"}}"#
        )
    }

    #[test]
    fn lines_are_read_as_they_are_completed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.log");
        let mut tail = AuditTail::new(&path, "op");
        assert_eq!(tail.poll().unwrap().requests().count(), 0, "no file yet");

        let mut file = std::fs::File::create(&path).unwrap();
        let second = event("b", "op", "patch");
        let (head, rest) = second.split_at(20);
        write!(file, "{}\n{head}", event("a", "op", "get")).unwrap();
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
        assert!(tail.server().is_none());
    }

    #[test]
    fn the_server_load_counts_every_user() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.log");
        let lines: String = (0..1000)
            .map(|i| {
                event(
                    &i.to_string(),
                    if i % 2 == 0 { "op" } else { "kwok" },
                    "get",
                ) + "\n"
            })
            .collect();
        std::fs::write(&path, lines).unwrap();
        let mut tail = AuditTail::new(&path, "op").with_server_load();
        assert_eq!(tail.poll().unwrap().requests().count(), 500);
        let load = tail.server().unwrap().load(
            "2026-01-01T00:00:00Z".parse().unwrap(),
            "2026-01-01T00:00:02Z".parse().unwrap(),
        );
        assert_eq!(load.requests, 1000);
        assert_eq!(load.all.p99, std::time::Duration::from_millis(2));
    }
}

//! Reading files an agent (or a submitted results tree) controls: opened without following
//! links, and refused unless they are regular files with one link and within a size limit,
//! so a link to the labels or a FIFO cannot forge or stall an attempt.

use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// The largest `diagnosis.json` read.
pub const DIAGNOSIS_MAX: u64 = 16 << 20;
/// The largest trajectory file read.
pub const TRAJECTORY_MAX: u64 = 512 << 20;

/// Why an untrusted file was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    Missing,
    /// A sentence: "is a symbolic link", "is not a regular file", …
    Bad(String),
}

impl Refused {
    /// The reason as a sentence about `name`.
    pub fn describe(&self, name: &str) -> String {
        match self {
            Refused::Missing => format!("{name}: missing"),
            Refused::Bad(why) => format!("{name}: {why}"),
        }
    }
}

/// The bytes of `path` when it is a regular file (not a link, FIFO, device or folder), has
/// one hard link (a second name could point outside the attempt) and at most `limit` bytes.
pub fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>, Refused> {
    let file = open_regular(path, limit)?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Refused::Bad(format!("cannot be read: {e}")))?;
    if bytes.len() as u64 > limit {
        return Err(Refused::Bad(format!("is larger than {limit} bytes")));
    }
    Ok(bytes)
}

/// Opens `path` as [`read_regular`] would, for readers that stream or seek.
pub fn open_regular(path: &Path, limit: u64) -> Result<std::fs::File, Refused> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        // O_NONBLOCK: opening a FIFO must not wait for a writer.
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Refused::Missing,
            _ if e.raw_os_error() == Some(libc::ELOOP) => {
                Refused::Bad("is a symbolic link, which is never followed".to_string())
            }
            _ => Refused::Bad(format!("cannot be opened: {e}")),
        })?;
    let meta = file
        .metadata()
        .map_err(|e| Refused::Bad(format!("cannot be read: {e}")))?;
    if !meta.file_type().is_file() {
        return Err(Refused::Bad(
            "cannot read: it is not a regular file (a folder, FIFO, socket or device)".to_string(),
        ));
    }
    if meta.nlink() > 1 {
        return Err(Refused::Bad(format!(
            "has {} hard links; an attempt's files must have one",
            meta.nlink()
        )));
    }
    if meta.len() > limit {
        return Err(Refused::Bad(format!(
            "is {} bytes, over the limit of {limit}",
            meta.len()
        )));
    }
    Ok(file)
}

/// [`read_regular`] as text (invalid UTF-8 is an error).
pub fn read_regular_text(path: &Path, limit: u64) -> Result<String, Refused> {
    String::from_utf8(read_regular(path, limit)?)
        .map_err(|_| Refused::Bad("is not UTF-8 text".to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_links_fifos_hard_links_and_large_files() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("labels.json");
        std::fs::write(&target, b"{\"blocks\":[]}").unwrap();
        let link = d.path().join("diagnosis.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let why = read_regular(&link, 100)
            .unwrap_err()
            .describe("diagnosis.json");
        assert!(why.contains("symbolic link"), "{why}");

        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo on a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(matches!(read_regular(&fifo, 100), Err(Refused::Bad(w)) if w.contains("regular")));

        let hard = d.path().join("hard");
        std::fs::hard_link(&target, &hard).unwrap();
        assert!(
            matches!(read_regular(&hard, 100), Err(Refused::Bad(w)) if w.contains("hard links"))
        );
        std::fs::remove_file(&hard).unwrap();

        assert!(matches!(read_regular(&target, 3), Err(Refused::Bad(w)) if w.contains("limit")));
        assert_eq!(read_regular(&target, 100).unwrap(), b"{\"blocks\":[]}");
        assert_eq!(
            read_regular(&d.path().join("none"), 100),
            Err(Refused::Missing)
        );
    }
}

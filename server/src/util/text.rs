//! Plain-text facts shared by validation and scoring (line counts of file contents).

/// Number of lines in `bytes` as an editor counts them: a trailing newline does not open a
/// new line, and an empty file has zero lines.
pub fn line_count(bytes: &[u8]) -> u32 {
    if bytes.is_empty() {
        return 0;
    }
    let newlines = bytes.iter().filter(|&&b| b == b'\n').count();
    let last_open = bytes.last() != Some(&b'\n');
    (newlines + usize::from(last_open)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_lines_like_an_editor() {
        assert_eq!(line_count(b""), 0);
        assert_eq!(line_count(b"a"), 1);
        assert_eq!(line_count(b"a\n"), 1);
        assert_eq!(line_count(b"a\nb"), 2);
        assert_eq!(line_count(b"a\r\nb\r\n"), 2);
    }
}

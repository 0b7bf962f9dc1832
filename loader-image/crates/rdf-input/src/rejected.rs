//! Where a statement is and why it was rejected: what every parser of this crate reports and
//! the parser entries (`parse.rs`) hand on, so a leaf that all of them use.

/// A 1-based line and column (columns count code points, as oxttl does).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    pub line: u64,
    pub column: u64,
}

/// A statement the parser rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejected {
    pub position: Position,
    pub message: String,
    /// The offending input text (the line, or the statement's bytes for Turtle/TriG).
    pub text: String,
    /// The lines `text` spans (both `position.line` for a line-based syntax).
    pub start_line: u64,
    pub end_line: u64,
}

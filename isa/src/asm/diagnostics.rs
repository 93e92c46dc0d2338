//! Assembler diagnostics: located messages with the offending source line, printed
//! rustc-style.

use std::fmt;

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    pub fn label(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One message about one place in the source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub file: String,
    /// 1-based line number.
    pub line: u32,
    /// 1-based column, counted in characters.
    pub column: u32,
    /// Number of characters the caret line underlines (at least 1).
    pub width: u32,
    pub message: String,
    /// The whole source line the diagnostic points into (without its newline).
    pub source_line: String,
    /// A suggestion ("did you mean `icmp_lt`?"), when one helps.
    pub hint: Option<String>,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let number = self.line.to_string();
        let gutter = " ".repeat(number.len());
        writeln!(f, "{}: {}", self.severity.label(), self.message)?;
        writeln!(f, "{gutter}--> {}:{}:{}", self.file, self.line, self.column)?;
        writeln!(f, "{gutter} |")?;
        writeln!(f, "{number} | {}", self.source_line)?;
        // Reuse the line's own whitespace before the caret so tabs line up.
        let pad: String = self
            .source_line
            .chars()
            .take(self.column.saturating_sub(1) as usize)
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        write!(f, "{gutter} | {pad}{}", "^".repeat(self.width.max(1) as usize))?;
        if let Some(hint) = &self.hint {
            write!(f, "\n{gutter} = help: {hint}")?;
        }
        Ok(())
    }
}

/// Every diagnostic of one assembly run (errors and warnings, in source order).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostics {
    pub items: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter().filter(|d| d.severity == Severity::Error)
    }
    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter().filter(|d| d.severity == Severity::Warning)
    }
    pub fn error_count(&self) -> usize {
        self.errors().count()
    }
    pub fn has_errors(&self) -> bool {
        self.errors().next().is_some()
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for d in &self.items {
            writeln!(f, "{d}\n")?;
        }
        let errors = self.error_count();
        let warnings = self.items.len() - errors;
        let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
        match (errors, warnings) {
            (0, w) => write!(f, "{}", plural(w, "warning")),
            (e, 0) => write!(f, "aborting due to {}", plural(e, "error")),
            (e, w) => write!(f, "aborting due to {} ({})", plural(e, "error"), plural(w, "warning")),
        }
    }
}

impl std::error::Error for Diagnostics {}

/// Levenshtein distance (for "did you mean" hints; inputs are short).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The candidate closest to `word`, if it is close enough to be a plausible typo.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(2);
    candidates
        .into_iter()
        // A truncated name (`sr_lane` for `sr_lane_id`) counts as a near miss.
        .map(|c| (if word.len() >= 3 && c.starts_with(word) { 1 } else { edit_distance(word, c) }, c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_and_closest() {
        assert_eq!(edit_distance("icmp_lz", "icmp_lt"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(closest("iad", ["iadd", "isub"]), Some("iadd"));
        assert_eq!(closest("zzzzzz", ["iadd", "isub"]), None);
    }

    #[test]
    fn display_points_at_the_column() {
        let d = Diagnostic {
            severity: Severity::Error,
            file: "k.wave".into(),
            line: 12,
            column: 2,
            width: 7,
            message: "unknown instruction `icmp_lz`".into(),
            source_line: "\ticmp_lz p1, r2, r3".into(),
            hint: Some("did you mean `icmp_lt`?".into()),
        };
        let text = d.to_string();
        assert!(text.contains("--> k.wave:12:2"), "{text}");
        assert!(text.contains("12 | \ticmp_lz p1, r2, r3"), "{text}");
        assert!(text.contains("   | \t^^^^^^^\n"), "{text}");
        assert!(text.ends_with("= help: did you mean `icmp_lt`?"), "{text}");
    }
}

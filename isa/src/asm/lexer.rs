//! Line lexer. The dialect has one statement per line, so each line is lexed on its own and
//! a bad character costs only that line.

/// What a token is.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// `[A-Za-z_][A-Za-z0-9_]*`: mnemonics, registers, labels, names.
    Word(String),
    /// `.` followed by a word: directives, scopes, cache hints, dotted mnemonic parts.
    DotWord(String),
    /// A number as written (underscores kept); the parser decides int or float.
    Number(String),
    Comma,
    Colon,
    At,
    Bang,
    Minus,
    /// Any character the dialect has no use for.
    Stray(char),
}

/// A token and where it is in its line (byte offsets).
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub start: usize,
    pub end: usize,
    /// Whether whitespace separates it from the previous token (`r5.lo` vs `r5 .lo`).
    pub spaced: bool,
}

fn is_word_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The part of a line before its comment (`;` or `#` to end of line).
pub fn strip_comment(line: &str) -> &str {
    match line.find([';', '#']) {
        Some(i) => &line[..i],
        None => line,
    }
}

/// Split one line (comment already removed) into tokens.
pub fn lex_line(line: &str) -> Vec<Token> {
    let bytes: Vec<(usize, char)> = line.char_indices().collect();
    let end_of = |i: usize| bytes.get(i).map_or(line.len(), |&(b, _)| b);
    let mut tokens = Vec::new();
    let mut i = 0;
    let mut spaced = true;
    while i < bytes.len() {
        let (start, c) = bytes[i];
        if c.is_whitespace() {
            spaced = true;
            i += 1;
            continue;
        }
        let take_word = |mut j: usize| {
            while j < bytes.len() && is_word_char(bytes[j].1) {
                j += 1;
            }
            j
        };
        let (tok, next) = if is_word_start(c) {
            let j = take_word(i + 1);
            (Tok::Word(line[start..end_of(j)].to_string()), j)
        } else if c.is_ascii_digit()
            || (c == '.' && bytes.get(i + 1).is_some_and(|&(_, d)| d.is_ascii_digit()))
        {
            let j = number_end(&bytes, i);
            (Tok::Number(line[start..end_of(j)].to_string()), j)
        } else if c == '.' && bytes.get(i + 1).is_some_and(|&(_, d)| is_word_start(d)) {
            let j = take_word(i + 1);
            (Tok::DotWord(line[end_of(i + 1)..end_of(j)].to_string()), j)
        } else {
            let tok = match c {
                ',' => Tok::Comma,
                ':' => Tok::Colon,
                '@' => Tok::At,
                '!' => Tok::Bang,
                '-' => Tok::Minus,
                other => Tok::Stray(other),
            };
            (tok, i + 1)
        };
        tokens.push(Token { tok, start, end: end_of(next), spaced });
        spaced = false;
        i = next;
    }
    tokens
}

/// End of a number starting at `i`: digits, letters, `_`, `.`, and a sign right after an
/// exponent `e` of a decimal number. Over-long runs (`12abc`) are rejected by the parser.
fn number_end(chars: &[(usize, char)], mut i: usize) -> usize {
    let hex = chars.get(i).is_some_and(|&(_, c)| c == '0')
        && chars.get(i + 1).is_some_and(|&(_, c)| c == 'x' || c == 'X');
    while i < chars.len() {
        let c = chars[i].1;
        let exponent_sign = (c == '+' || c == '-') && !hex && matches!(chars[i - 1].1, 'e' | 'E');
        if c.is_ascii_alphanumeric() || c == '_' || c == '.' || exponent_sign {
            i += 1;
        } else {
            break;
        }
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(line: &str) -> Vec<Tok> {
        lex_line(line).into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn instruction_line() {
        assert_eq!(
            toks("@!p1 iadd r1, r2,r3"),
            vec![
                Tok::At,
                Tok::Bang,
                Tok::Word("p1".into()),
                Tok::Word("iadd".into()),
                Tok::Word("r1".into()),
                Tok::Comma,
                Tok::Word("r2".into()),
                Tok::Comma,
                Tok::Word("r3".into()),
            ]
        );
    }

    #[test]
    fn numbers_and_dots() {
        assert_eq!(
            toks("mov_imm r1, -2.5e-3"),
            vec![
                Tok::Word("mov_imm".into()),
                Tok::Word("r1".into()),
                Tok::Comma,
                Tok::Minus,
                Tok::Number("2.5e-3".into()),
            ]
        );
        assert_eq!(toks("0x3f80_0000"), vec![Tok::Number("0x3f80_0000".into())]);
        assert_eq!(toks("0x1e-1"), vec![Tok::Number("0x1e".into()), Tok::Minus, Tok::Number("1".into())]);
        let t = lex_line("device_load.u32 r5.lo .cached");
        assert_eq!(t[1].tok, Tok::DotWord("u32".into()));
        assert!(!t[1].spaced);
        assert_eq!(t[3].tok, Tok::DotWord("lo".into()));
        assert!(!t[3].spaced);
        assert!(t[4].spaced);
        assert_eq!((t[4].start, t[4].end), (22, 29));
    }

    #[test]
    fn comments() {
        assert_eq!(strip_comment("iadd r1, r2, r3 ; add # more"), "iadd r1, r2, r3 ");
        assert_eq!(strip_comment("# all comment"), "");
    }
}

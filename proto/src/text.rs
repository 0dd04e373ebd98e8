//! What client text may hold, for every program that checks or quotes it:
//! characters that reorder or hide what a screen shows (bidi controls,
//! zero-width and other format characters) are told apart here once. A
//! name made of them alone looks blank on a packing slip; one with a
//! right-to-left override shows its letters in another order.

use crate::error::codes;

/// Bidi embeddings, overrides and isolates (U+202A-U+202E,
/// U+2066-U+2069) and marks (LRM U+200E, RLM U+200F, ALM U+061C): they
/// change the order the text around them is shown in.
pub fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}'
    )
}

/// Characters a name never holds anywhere, though they are no controls:
/// the line and paragraph separators (they break a label's line) and the
/// byte-order mark (hidden, and a sign of text pasted from a file).
pub fn is_line_break_or_mark(c: char) -> bool {
    matches!(c, '\u{2028}' | '\u{2029}' | '\u{FEFF}')
}

/// Format characters (Unicode category Cf) and fillers that show nothing
/// on their own: zero-width spaces and joiners, marks, the soft hyphen,
/// word joiners, the byte-order mark, Hangul and braille fillers. (All in
/// the Basic Multilingual Plane, so that [`NAME_PATTERN`] can list them.)
pub fn is_format(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{061C}'
            | '\u{115F}'
            | '\u{1160}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206F}'
            | '\u{2800}'
            | '\u{3164}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{FFF9}'..='\u{FFFB}'
    )
}

/// Whether `c` shows as nothing: white space or a format character.
pub fn is_invisible(c: char) -> bool {
    c.is_whitespace() || is_format(c)
}

/// What is wrong with a name-like text, if anything: control characters,
/// bidi controls, or nothing visible at all. Its length is the caller's.
pub fn name_problem(value: &str) -> Option<NameProblem> {
    if value
        .chars()
        .any(|c| c.is_control() || is_line_break_or_mark(c))
    {
        Some(NameProblem::Control)
    } else if value.chars().any(is_bidi_control) {
        Some(NameProblem::BidiControl)
    } else if value.chars().all(is_invisible) {
        Some(NameProblem::Invisible)
    } else {
        None
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameProblem {
    Control,
    BidiControl,
    Invisible,
}

impl NameProblem {
    /// The field error's code and what to tell the client.
    pub fn describe(self) -> (&'static str, &'static str) {
        match self {
            NameProblem::Control => (
                codes::INVALID_FORMAT,
                "contains control characters, line separators or a byte-order mark",
            ),
            NameProblem::BidiControl => (
                codes::INVALID_FORMAT,
                "contains characters that change the direction of text",
            ),
            NameProblem::Invisible => (codes::REQUIRED, "has no visible characters"),
        }
    }
}

/// The JSON Schema (ECMA-262) pattern of a name [`name_problem`] accepts:
/// no control or bidi characters, at least one visible character. The
/// classes below are the ones the functions above test.
pub const NAME_PATTERN: &str = concat!(
    r"^[^\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u2028\u2029\u202A-\u202E\u2066-\u2069\uFEFF]*",
    r"[^\s\u0000-\u001F\u007F-\u009F\u00AD\u034F\u061C\u115F\u1160\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\u2800\u3164\uFEFF\uFFA0\uFFF9-\uFFFB]",
    r"[^\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u2028\u2029\u202A-\u202E\u2066-\u2069\uFEFF]*$"
);

/// The pattern of optional text: no control or bidi characters.
pub const OPTIONAL_TEXT_PATTERN: &str = r"^[^\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u2028\u2029\u202A-\u202E\u2066-\u2069\uFEFF]*$";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_hide_or_reorder_are_refused() {
        assert_eq!(name_problem("Ava"), None);
        assert_eq!(name_problem("José Núñez"), None);
        assert_eq!(name_problem("محمد"), None, "right-to-left letters are fine");
        assert_eq!(name_problem("\u{202E}avA"), Some(NameProblem::BidiControl));
        assert_eq!(name_problem("a\u{2067}b"), Some(NameProblem::BidiControl));
        for mark in ['\u{200E}', '\u{200F}', '\u{061C}'] {
            let name = format!("Ava{mark}");
            assert_eq!(
                name_problem(&name),
                Some(NameProblem::BidiControl),
                "{mark:?}"
            );
        }
        for hidden in ['\u{2028}', '\u{2029}', '\u{FEFF}'] {
            let name = format!("A{hidden}va");
            assert_eq!(
                name_problem(&name),
                Some(NameProblem::Control),
                "{hidden:?}"
            );
        }
        assert_eq!(name_problem("\u{200B}"), Some(NameProblem::Invisible));
        assert_eq!(
            name_problem(" \u{3164}\u{2800} "),
            Some(NameProblem::Invisible)
        );
        // A byte-order mark is refused wherever it is (above), even among
        // other invisible characters.
        assert_eq!(
            name_problem(" \u{3164}\u{FEFF} "),
            Some(NameProblem::Control)
        );
        assert_eq!(name_problem("a\u{0}"), Some(NameProblem::Control));
        assert_eq!(
            name_problem("Zoë\u{200D}"),
            None,
            "a joiner beside letters is fine"
        );
    }
}

//! The key a word's matches are kept by between searches
//! (`crate::word_matches`).

use crate::text_query::Source;
use crate::word_matches::Key;

/// The key a word is kept by: its sources' fields, terms and typos, each
/// with its length and whether it is read apart (`slots`, by position),
/// so that two different words, or one word read apart and not, never
/// have one key.
pub(super) fn key(sources: &[Source], slots: &[Option<usize>]) -> Key {
    let mut out = Vec::new();
    encode(sources, &mut out);
    // After the sources, which say how many they are.
    out.extend((0..sources.len()).map(|at| u8::from(slots.get(at).copied().flatten().is_some())));
    out.into()
}

fn encode(sources: &[Source], out: &mut Vec<u8>) {
    out.extend((sources.len() as u32).to_le_bytes());
    for source in sources {
        match source {
            Source::Term(term) => {
                out.push(0);
                term_bytes(term, out);
            }
            Source::Within(term, typos) => {
                out.extend([1, *typos]);
                term_bytes(term, out);
            }
            Source::All(parts) => {
                out.push(2);
                out.extend((parts.len() as u32).to_le_bytes());
                for part in parts {
                    encode(part, out);
                }
            }
        }
    }
}

fn term_bytes(term: &tantivy::Term, out: &mut Vec<u8>) {
    let value = term.serialized_value_bytes();
    out.extend(term.field().field_id().to_le_bytes());
    out.extend((value.len() as u32).to_le_bytes());
    out.extend_from_slice(value);
}

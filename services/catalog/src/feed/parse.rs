//! A feed's problems as it reports them (`line N: field: message`), and a
//! line read as a record of a type, naming the field of its first problem.

/// One problem of a feed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedError {
    pub line: usize,
    /// The record's field (a JSON path: `variants[0].prices[1].currencyCode`),
    /// or `record` for the line as a whole.
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for FeedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}: {}", self.line, self.field, self.message)
    }
}

/// `bytes` as a record of type `T`, or the field and message of its
/// first problem.
pub fn parse_record<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, (String, String)> {
    // One check of the whole line's UTF-8 is a fraction of one per string
    // (serde_json's reader of bytes checks each string it reads). Tracking
    // the path costs on every field: only a record that fails is read
    // again to name its field.
    let parsed = match std::str::from_utf8(bytes) {
        Ok(text) => serde_json::from_str(text),
        Err(_) => serde_json::from_slice(bytes),
    };
    parsed.map_err(|_| {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        match serde_path_to_error::deserialize::<_, T>(&mut de) {
            Err(e) => {
                let path = e.path().to_string();
                problem(&path, &e.into_inner())
            }
            Ok(_) => ("record".to_string(), "could not be read".to_string()),
        }
    })
}

pub(crate) fn not_json(e: &serde_json::Error) -> String {
    format!(
        "not a JSON object (column {}): {}",
        e.column(),
        strip_position(&e.to_string())
    )
}

/// serde_json's message without its " at line L column C".
fn strip_position(message: &str) -> &str {
    message.split(" at line ").next().unwrap_or(message)
}

/// A field and message from a deserialisation failure at `path`.
fn problem(path: &str, e: &serde_json::Error) -> (String, String) {
    problem_of(path, &e.to_string())
}

/// A field and message from serde's `message` at `path`.
pub(crate) fn problem_of(path: &str, message: &str) -> (String, String) {
    let message = strip_position(message).to_string();
    // The path names the field itself when serde met it (an unknown
    // field), its record when the field is missing.
    let join = |field: &str| {
        if path.is_empty() || path == "." {
            field.to_string()
        } else if path == field || path.ends_with(&format!(".{field}")) {
            path.to_string()
        } else {
            format!("{path}.{field}")
        }
    };
    let quoted = |m: &str, prefix: &str| {
        m.strip_prefix(prefix)
            .and_then(|r| r.split('`').next())
            .map(str::to_string)
    };
    if let Some(field) = quoted(&message, "missing field `") {
        return (join(&field), "is required".to_string());
    }
    if let Some(field) = quoted(&message, "unknown field `") {
        return (join(&field), "is not a field of this record".to_string());
    }
    let field = if path.is_empty() || path == "." {
        "record".to_string()
    } else {
        path.to_string()
    };
    if let Some(expected) = message
        .strip_prefix("invalid type: ")
        .and_then(|m| m.split_once(", expected "))
        .map(|(_, e)| e)
    {
        return (field, format!("has the wrong type (expected {expected})"));
    }
    (field, message)
}

//! Reading protobuf's wire format in place: the fields of a message as
//! slices of the bytes it arrived in, nothing decoded into owned values.
//!
//! A message may come as several encodings (a product and the tail of
//! fields the catalog appends per request): protobuf reads concatenated
//! encodings as one message, merged, so a `Message` is a list of parts and
//! a singular message field that occurs more than once is the list of its
//! occurrences.

use std::fmt;

/// Why bytes are not the message they should be.
#[derive(Debug)]
pub struct WireError {
    what: &'static str,
    malformed: bool,
}

impl WireError {
    const fn malformed(what: &'static str) -> Self {
        Self {
            what,
            malformed: true,
        }
    }

    /// Well formed, but without a field the reply must have.
    pub const fn missing(what: &'static str) -> Self {
        Self {
            what,
            malformed: false,
        }
    }
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.malformed {
            write!(f, "malformed protobuf: {}", self.what)
        } else {
            f.write_str(self.what)
        }
    }
}

pub type Result<T> = std::result::Result<T, WireError>;

/// One field's value as it is on the wire.
#[derive(Clone, Copy, Debug)]
pub enum Value<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    /// A fixed-width number (none of the fields read here is one).
    Fixed,
}

impl<'a> Value<'a> {
    pub fn varint(self) -> Result<u64> {
        match self {
            Value::Varint(v) => Ok(v),
            _ => Err(WireError::malformed("expected a varint")),
        }
    }

    pub fn bytes(self) -> Result<&'a [u8]> {
        match self {
            Value::Bytes(b) => Ok(b),
            _ => Err(WireError::malformed("expected a length-delimited field")),
        }
    }

    pub fn str(self) -> Result<&'a str> {
        std::str::from_utf8(self.bytes()?)
            .map_err(|_| WireError::malformed("a string is not UTF-8"))
    }
}

/// A message: one or more encodings read as one.
#[derive(Clone, Debug, Default)]
pub struct Message<'a> {
    first: Option<&'a [u8]>,
    more: Vec<&'a [u8]>,
}

impl<'a> Message<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Self {
            first: Some(bytes),
            more: Vec::new(),
        }
    }

    /// Whether the field occurred at all (an empty message still counts).
    pub fn is_present(&self) -> bool {
        self.first.is_some()
    }

    /// Merges one more occurrence of this message field.
    pub fn merge(&mut self, bytes: &'a [u8]) {
        match self.first {
            None => self.first = Some(bytes),
            Some(_) => self.more.push(bytes),
        }
    }

    /// Every field in wire order, across the parts.
    pub fn fields(&self) -> MessageFields<'a, '_> {
        MessageFields {
            current: Fields {
                rest: self.first.unwrap_or_default(),
            },
            more: self.more.iter(),
        }
    }

    /// The values of field `number`, in wire order (a repeated field).
    pub fn repeated(&self, number: u32) -> impl Iterator<Item = Result<Value<'a>>> + '_ {
        self.fields().filter_map(move |f| match f {
            Ok((n, v)) if n == number => Some(Ok(v)),
            Ok(_) => None,
            Err(e) => Some(Err(e)),
        })
    }
}

/// The fields of a message's parts, one part after the other.
pub struct MessageFields<'a, 'm> {
    current: Fields<'a>,
    more: std::slice::Iter<'m, &'a [u8]>,
}

impl<'a> Iterator for MessageFields<'a, '_> {
    type Item = Result<(u32, Value<'a>)>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(field) = self.current.next() {
                return Some(field);
            }
            self.current = Fields {
                rest: self.more.next()?,
            };
        }
    }
}

struct Fields<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u32, Value<'a>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let field = self.field();
        if field.is_err() {
            self.rest = &[];
        }
        Some(field)
    }
}

impl<'a> Fields<'a> {
    fn field(&mut self) -> Result<(u32, Value<'a>)> {
        let key = self.varint()?;
        let number = u32::try_from(key >> 3).map_err(|_| WireError::malformed("field number"))?;
        if number == 0 {
            return Err(WireError::malformed("field number 0"));
        }
        let value = match key & 7 {
            0 => Value::Varint(self.varint()?),
            1 => {
                self.take(8)?;
                Value::Fixed
            }
            2 => {
                let len =
                    usize::try_from(self.varint()?).map_err(|_| WireError::malformed("length"))?;
                Value::Bytes(self.take(len)?)
            }
            5 => {
                self.take(4)?;
                Value::Fixed
            }
            _ => return Err(WireError::malformed("unsupported wire type")),
        };
        Ok((number, value))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.rest.len() {
            return Err(WireError::malformed("truncated"));
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    fn varint(&mut self) -> Result<u64> {
        let mut value = 0u64;
        for (i, &byte) in self.rest.iter().enumerate().take(10) {
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte < 0x80 {
                self.rest = &self.rest[i + 1..];
                return Ok(value);
            }
        }
        Err(WireError::malformed("bad varint"))
    }
}

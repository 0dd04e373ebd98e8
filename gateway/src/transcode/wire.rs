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

    /// A string field's bytes, checked as UTF-8 when they are written
    /// (see `product::text`): most are ASCII, checked with the escapes.
    pub fn text(self) -> Result<&'a [u8]> {
        self.bytes()
    }
}

/// A string field's bytes as the string they must be.
pub fn utf8(bytes: &[u8]) -> Result<&str> {
    std::str::from_utf8(bytes).map_err(|_| WireError::malformed("a string is not UTF-8"))
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

    #[inline]
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
    pub fn repeated(&self, number: u32) -> impl Iterator<Item = Result<Value<'a>>> + Clone + '_ {
        self.fields().filter_map(move |f| match f {
            Ok((n, v)) if n == number => Some(Ok(v)),
            Ok(_) => None,
            Err(e) => Some(Err(e)),
        })
    }
}

/// The fields of a message's parts, one part after the other.
#[derive(Clone)]
pub struct MessageFields<'a, 'm> {
    current: Fields<'a>,
    more: std::slice::Iter<'m, &'a [u8]>,
}

impl<'a> Iterator for MessageFields<'a, '_> {
    type Item = Result<(u32, Value<'a>)>;

    #[inline]
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

#[derive(Clone)]
struct Fields<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u32, Value<'a>)>;

    #[inline]
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
    #[inline]
    fn field(&mut self) -> Result<(u32, Value<'a>)> {
        let key = self.varint()?;
        // A key wider than 32 bits is refused, as decoders refuse it.
        let number = u32::try_from(key).map_err(|_| WireError::malformed("field key"))? >> 3;
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
            3 => {
                self.skip_group(number)?;
                Value::Fixed
            }
            _ => return Err(WireError::malformed("unsupported wire type")),
        };
        Ok((number, value))
    }

    #[cold]
    #[inline(never)]
    /// Skips a (deprecated) group up to its end, as protobuf decoders
    /// skip an unknown field of that wire type; groups nest at most as
    /// deep as prost allows.
    fn skip_group(&mut self, number: u32) -> Result<()> {
        const MAX_DEPTH: usize = 100;
        let mut open = vec![number];
        while let Some(&innermost) = open.last() {
            let key = self.varint()?;
            let inner = u32::try_from(key)
                .ok()
                .map(|k| k >> 3)
                .filter(|&n| n != 0)
                .ok_or(WireError::malformed("field number"))?;
            match key & 7 {
                0 => {
                    self.varint()?;
                }
                1 => {
                    self.take(8)?;
                }
                2 => {
                    let len = usize::try_from(self.varint()?)
                        .map_err(|_| WireError::malformed("length"))?;
                    self.take(len)?;
                }
                5 => {
                    self.take(4)?;
                }
                3 if open.len() < MAX_DEPTH => open.push(inner),
                4 if inner == innermost => {
                    open.pop();
                }
                _ => return Err(WireError::malformed("bad group")),
            }
        }
        Ok(())
    }

    #[inline]
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.rest.len() {
            return Err(WireError::malformed("truncated"));
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    #[inline]
    fn varint(&mut self) -> Result<u64> {
        // Most varints here (field keys, lengths, flags) are one byte.
        if let Some((&byte, rest)) = self.rest.split_first()
            && byte < 0x80
        {
            self.rest = rest;
            return Ok(u64::from(byte));
        }
        self.long_varint()
    }

    fn long_varint(&mut self) -> Result<u64> {
        let mut value = 0u64;
        for (i, &byte) in self.rest.iter().enumerate().take(10) {
            // The tenth byte holds the 64th bit only, as decoders insist.
            if i == 9 && byte > 1 {
                break;
            }
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte < 0x80 {
                self.rest = &self.rest[i + 1..];
                return Ok(value);
            }
        }
        Err(WireError::malformed("bad varint"))
    }
}

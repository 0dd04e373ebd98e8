//! Reading protobuf wire bytes in place, with prost's own helpers and
//! rules (a field seen twice keeps its last value, an unknown field is
//! skipped): what `text` and `facts` share.

use prost::encoding::{DecodeContext, WireType, check_wire_type, decode_key, decode_varint};

pub(super) type Wire<'a> = &'a [u8];

pub(super) fn wrong(e: impl std::fmt::Display) -> String {
    e.to_string()
}

pub(super) fn skip(wire: WireType, tag: u32, buf: &mut Wire<'_>) -> Result<(), String> {
    prost::encoding::skip_field(wire, tag, buf, DecodeContext::default()).map_err(wrong)
}

/// A length-delimited field's bytes.
pub(super) fn delimited<'a>(wire: WireType, buf: &mut Wire<'a>) -> Result<&'a [u8], String> {
    check_wire_type(WireType::LengthDelimited, wire).map_err(wrong)?;
    let len = decode_varint(buf).map_err(wrong)?;
    let Some(len) = usize::try_from(len).ok().filter(|&n| n <= buf.len()) else {
        return Err("buffer underflow".into());
    };
    let (head, tail) = buf.split_at(len);
    *buf = tail;
    Ok(head)
}

pub(super) fn string<'a>(wire: WireType, buf: &mut Wire<'a>) -> Result<&'a str, String> {
    let bytes = delimited(wire, buf)?;
    std::str::from_utf8(bytes).map_err(|_| "invalid string value: data is not UTF-8 encoded".into())
}

/// A map entry's key and value (each empty when absent).
fn entry(mut bytes: Wire<'_>) -> Result<(&str, &str), String> {
    let buf = &mut bytes;
    let (mut key, mut value) = ("", "");
    while !buf.is_empty() {
        let (tag, wire) = decode_key(buf).map_err(wrong)?;
        match tag {
            1 => key = string(wire, buf)?,
            2 => value = string(wire, buf)?,
            _ => skip(wire, tag, buf)?,
        }
    }
    Ok((key, value))
}

/// A varint field's value, as prost reads it before any truncation.
pub(super) fn varint(wire: WireType, buf: &mut Wire<'_>) -> Result<u64, String> {
    check_wire_type(WireType::Varint, wire).map_err(wrong)?;
    decode_varint(buf).map_err(wrong)
}

/// `LocalizedString.values`, a map: entries of key 1, value 2.
const VALUES: u32 = 1;

/// Each (locale, text) entry of an encoded `LocalizedString`, in order.
pub(super) fn localized_entries<'a>(
    mut bytes: Wire<'a>,
    mut each: impl FnMut(&'a str, &'a str),
) -> Result<(), String> {
    let buf = &mut bytes;
    while !buf.is_empty() {
        let (tag, wire) = decode_key(buf).map_err(wrong)?;
        if tag != VALUES {
            skip(wire, tag, buf)?;
            continue;
        }
        let (locale, text) = entry(delimited(wire, buf)?)?;
        each(locale, text);
    }
    Ok(())
}

//! An address book entry is a postal address and whether it is the
//! default: the two messages number their shared fields alike.

use crate::common::v1::PostalAddress;
use crate::customers::v1::AddressInput;

impl From<AddressInput> for PostalAddress {
    fn from(a: AddressInput) -> Self {
        Self {
            first_name: a.first_name,
            last_name: a.last_name,
            street_name: a.street_name,
            street_number: a.street_number,
            city: a.city,
            postal_code: a.postal_code,
            state: a.state,
            country: a.country,
            region: a.region,
        }
    }
}

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::*;

    /// The shared fields are numbered alike: an entry's bytes read as its
    /// postal address, which is what the conversion gives.
    #[test]
    fn an_entry_reads_as_its_postal_address() {
        let entry = AddressInput {
            first_name: "Ava".into(),
            last_name: "Nguyen".into(),
            street_name: "George St".into(),
            street_number: "1".into(),
            city: "Sydney".into(),
            postal_code: "2000".into(),
            state: "NSW".into(),
            country: "AU".into(),
            is_default: true,
            region: "AU-NSW".into(),
        };
        let read = PostalAddress::decode(entry.encode_to_vec().as_slice()).unwrap();
        assert_eq!(read, PostalAddress::from(entry));
    }
}

//! What the customers service stores, and its protobuf views.

use serde::{Deserialize, Serialize};
use storefront_domain::query::{FieldType, Schema, Value};
use storefront_proto::Timestamp;
use storefront_proto::common::v1::ResourceMeta;
use storefront_proto::customers::v1::{
    Address, AddressInput, Customer, CustomerSummary, Preferences,
};
use storefront_proto::names;

pub fn customer_key(id: &str) -> String {
    format!("customer:{id}")
}

pub fn email_key(email: &str) -> String {
    format!("email:{email}")
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

pub fn timestamp(ms: i64) -> Option<Timestamp> {
    Some(Timestamp {
        seconds: ms.div_euclid(1000),
        nanos: (ms.rem_euclid(1000) * 1_000_000) as i32,
    })
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AddressDoc {
    pub id: String,
    pub version: i64,
    pub created_ms: i64,
    pub modified_ms: i64,
    pub first_name: String,
    pub last_name: String,
    pub street_name: String,
    pub street_number: String,
    pub city: String,
    pub postal_code: String,
    pub state: String,
    pub country: String,
    pub is_default: bool,
    /// Stored before regions: none.
    #[serde(default)]
    pub region: String,
}

impl AddressDoc {
    pub fn new(input: AddressInput, now: i64) -> Self {
        let mut doc = Self {
            id: uuid::Uuid::new_v4().to_string(),
            version: 0,
            created_ms: now,
            modified_ms: now,
            first_name: String::new(),
            last_name: String::new(),
            street_name: String::new(),
            street_number: String::new(),
            city: String::new(),
            postal_code: String::new(),
            state: String::new(),
            country: String::new(),
            is_default: false,
            region: String::new(),
        };
        doc.set(input, now);
        doc
    }

    pub fn set(&mut self, a: AddressInput, now: i64) {
        self.version += 1;
        self.modified_ms = now;
        self.first_name = a.first_name;
        self.last_name = a.last_name;
        self.street_name = a.street_name;
        self.street_number = a.street_number;
        self.city = a.city;
        self.postal_code = a.postal_code;
        self.state = a.state;
        self.country = a.country;
        self.is_default = a.is_default;
        self.region = a.region;
    }

    pub fn to_proto(&self) -> Address {
        Address {
            meta: Some(ResourceMeta {
                id: self.id.clone(),
                version: self.version,
                created_at: timestamp(self.created_ms),
                last_modified_at: timestamp(self.modified_ms),
            }),
            fields: Some(AddressInput {
                first_name: self.first_name.clone(),
                last_name: self.last_name.clone(),
                street_name: self.street_name.clone(),
                street_number: self.street_number.clone(),
                city: self.city.clone(),
                postal_code: self.postal_code.clone(),
                state: self.state.clone(),
                country: self.country.clone(),
                is_default: self.is_default,
                region: self.region.clone(),
            }),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PreferencesDoc {
    pub preferred_locale: String,
    pub preferred_currency: String,
    pub marketing_emails: bool,
}

/// The shop's locale, no currency (an account takes the shop's default
/// currency when it is made), no marketing.
impl Default for PreferencesDoc {
    fn default() -> Self {
        Self {
            preferred_locale: names::DEFAULT_LOCALE.into(),
            preferred_currency: String::new(),
            marketing_emails: false,
        }
    }
}

impl PreferencesDoc {
    pub fn to_proto(&self) -> Preferences {
        Preferences {
            preferred_locale: self.preferred_locale.clone(),
            preferred_currency: self.preferred_currency.clone(),
            marketing_emails: self.marketing_emails,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CustomerDoc {
    pub id: String,
    pub email: String,
    pub password_hash: String,
    pub first_name: String,
    pub last_name: String,
    #[serde(default)]
    pub phone: String,
    #[serde(default)]
    pub date_of_birth: String,
    pub created_ms: i64,
    pub modified_ms: i64,
    #[serde(default)]
    pub addresses: Vec<AddressDoc>,
    #[serde(default)]
    pub preferences: PreferencesDoc,
}

impl CustomerDoc {
    pub fn summary(&self) -> CustomerSummary {
        CustomerSummary {
            id: self.id.clone(),
            email_address: self.email.clone(),
            first_name: self.first_name.clone(),
            last_name: self.last_name.clone(),
        }
    }

    pub fn to_proto(&self, version: u64) -> Customer {
        Customer {
            meta: Some(ResourceMeta {
                id: self.id.clone(),
                version: version as i64,
                created_at: timestamp(self.created_ms),
                last_modified_at: timestamp(self.modified_ms),
            }),
            email_address: self.email.clone(),
            first_name: self.first_name.clone(),
            last_name: self.last_name.clone(),
            phone: self.phone.clone(),
            date_of_birth: self.date_of_birth.clone(),
            default_shipping_address_id: self
                .addresses
                .iter()
                .find(|a| a.is_default)
                .map(|a| a.id.clone())
                .unwrap_or_default(),
        }
    }

    /// Makes `id` the only default address when it is marked default.
    pub fn keep_one_default(&mut self, id: &str) {
        if self.addresses.iter().any(|a| a.id == id && a.is_default) {
            for a in self
                .addresses
                .iter_mut()
                .filter(|a| a.id != id && a.is_default)
            {
                a.is_default = false;
            }
        }
    }
}

#[derive(Clone, Copy)]
pub enum AddressField {
    IsDefault,
    CreatedAt,
    City,
    Country,
}

pub struct AddressSchema;

impl Schema for AddressSchema {
    type Record = AddressDoc;
    type Field = AddressField;
    type Context = ();

    fn resolve(name: &str) -> Option<(AddressField, FieldType)> {
        Some(match name {
            "isDefault" => (AddressField::IsDefault, FieldType::Boolean),
            "createdAt" => (AddressField::CreatedAt, FieldType::Timestamp),
            "city" => (AddressField::City, FieldType::Text),
            "country" => (AddressField::Country, FieldType::Text),
            _ => return None,
        })
    }

    fn id(a: &AddressDoc) -> &str {
        &a.id
    }

    fn value<'a>(a: &'a AddressDoc, field: AddressField, _: &()) -> Value<'a> {
        match field {
            AddressField::IsDefault => Value::Boolean(a.is_default),
            AddressField::CreatedAt => {
                let t = timestamp(a.created_ms).unwrap_or_default();
                Value::Timestamp(t.seconds, t.nanos)
            }
            AddressField::City => Value::Text(&a.city),
            AddressField::Country => Value::Text(&a.country),
        }
    }
}

#[cfg(test)]
mod vocabulary_tests {
    use storefront_domain::query::vocabulary::{ADDRESSES, assert_schema_follows};

    #[test]
    fn the_schema_follows_the_vocabulary() {
        assert_schema_follows::<super::AddressSchema>(&ADDRESSES);
    }
}

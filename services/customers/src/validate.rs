//! Field rules for customer input, collected so one answer lists every bad
//! field (422 `VALIDATION_ERROR`).

use storefront_platform::error::{ErrorKind, FieldViolation, ServiceError};
use storefront_platform::text::{NameProblem, name_problem};
use storefront_proto::customers::v1::{AddressInput, Preferences};
use storefront_proto::error::codes;

use storefront_domain::currencies::Currencies;

#[derive(Default)]
pub struct Violations(Vec<FieldViolation>);

impl Violations {
    pub fn add(&mut self, field: &str, code: &'static str, message: impl Into<String>) {
        self.0.push(FieldViolation::new(field, code, message));
    }

    pub fn push(&mut self, violation: FieldViolation) {
        self.0.push(violation);
    }

    pub fn finish(self) -> Result<(), ServiceError> {
        if self.0.is_empty() {
            return Ok(());
        }
        let fields: Vec<&str> = self.0.iter().map(|v| v.field.as_str()).collect();
        let message = format!("invalid fields: {}", fields.join(", "));
        let mut err = ServiceError::new(ErrorKind::Validation, codes::VALIDATION_ERROR, message);
        err.violations = self.0;
        Err(err)
    }

    /// A required, trimmed text of at most `max` characters, with something
    /// visible in it (see [`Violations::optional_text`]).
    pub fn text(&mut self, field: &str, value: &str, max: usize) -> String {
        if value.trim().is_empty() {
            self.add(field, codes::REQUIRED, format!("{field} is required"));
            String::new()
        } else {
            self.checked_text(field, value, max, true)
        }
    }

    /// Control characters are refused even at the ends (a trailing newline
    /// is junk, not spacing), and so are bidi controls, which reorder what
    /// a packing slip or an order screen shows (`text::name_problem`);
    /// spaces around the text are trimmed.
    pub fn optional_text(&mut self, field: &str, value: &str, max: usize) -> String {
        self.checked_text(field, value, max, false)
    }

    fn checked_text(&mut self, field: &str, value: &str, max: usize, required: bool) -> String {
        let trimmed = value.trim();
        if trimmed.chars().count() > max {
            self.add(
                field,
                codes::OUT_OF_RANGE,
                format!("{field} has more than {max} characters"),
            );
        } else if let Some(problem) =
            name_problem(value).filter(|p| required || *p != NameProblem::Invisible)
        {
            let (code, what) = problem.describe();
            self.add(field, code, format!("{field} {what}"));
        }
        trimmed.to_string()
    }

    /// A syntactically valid email address, lower-cased.
    pub fn email(&mut self, value: &str) -> String {
        let email = value.trim().to_lowercase();
        if email.is_empty() {
            self.add("emailAddress", codes::REQUIRED, "emailAddress is required");
        } else if !is_email(&email) {
            self.add(
                "emailAddress",
                codes::INVALID_FORMAT,
                "emailAddress is not a valid email address",
            );
        }
        email
    }

    pub fn phone(&mut self, value: &str) -> String {
        let phone = value.trim();
        let digits = phone.chars().filter(char::is_ascii_digit).count();
        let allowed = phone
            .chars()
            .enumerate()
            .all(|(i, c)| c.is_ascii_digit() || c == ' ' || c == '-' || (c == '+' && i == 0));
        if !phone.is_empty() && (!allowed || !(6..=15).contains(&digits)) {
            self.add(
                "phone",
                codes::INVALID_FORMAT,
                "phone must be digits, optionally with a leading + (E.164)",
            );
        }
        phone.to_string()
    }

    pub fn date_of_birth(&mut self, value: &str, today: &str) -> String {
        let date = value.trim();
        if date.is_empty() {
            return String::new();
        }
        if !is_date(date) {
            self.add(
                "dateOfBirth",
                codes::INVALID_FORMAT,
                "dateOfBirth must be a date, YYYY-MM-DD",
            );
        } else if date > today || date < "1900-01-01" {
            self.add(
                "dateOfBirth",
                codes::OUT_OF_RANGE,
                "dateOfBirth must be between 1900-01-01 and today",
            );
        }
        date.to_string()
    }

    pub fn address(&mut self, a: &AddressInput) -> AddressInput {
        AddressInput {
            first_name: self.text("firstName", &a.first_name, 100),
            last_name: self.text("lastName", &a.last_name, 100),
            street_name: self.text("streetName", &a.street_name, 200),
            street_number: self.optional_text("streetNumber", &a.street_number, 20),
            city: self.text("city", &a.city, 100),
            postal_code: self.text("postalCode", &a.postal_code, 20),
            state: self.optional_text("state", &a.state, 100),
            country: self.country(&a.country),
            is_default: a.is_default,
            region: self.region(&a.region, &a.country),
        }
    }

    /// An optional ISO 3166-2 code of the address's own country (`US-CA`),
    /// upper-cased.
    fn region(&mut self, value: &str, country: &str) -> String {
        let region = value.trim().to_ascii_uppercase();
        if region.is_empty() {
            return region;
        }
        let ok = region.split_once('-').is_some_and(|(c, rest)| {
            c == country.trim()
                && (1..=3).contains(&rest.len())
                && rest.bytes().all(|b| b.is_ascii_alphanumeric())
        });
        if !ok {
            self.add(
                "region",
                codes::INVALID_FORMAT,
                "region must be an ISO 3166-2 code of the address's country, e.g. US-CA",
            );
        }
        region
    }

    fn country(&mut self, value: &str) -> String {
        let country = value.trim().to_string();
        if country.is_empty() {
            self.add("country", codes::REQUIRED, "country is required");
        } else if !(country.len() == 2 && country.bytes().all(|b| b.is_ascii_uppercase())) {
            self.add(
                "country",
                codes::INVALID_FORMAT,
                "country must be an ISO 3166-1 alpha-2 code, e.g. AU",
            );
        }
        country
    }

    /// A preference of a locale's shape and one of the shop's `currencies`.
    pub fn preferences(&mut self, p: &Preferences, currencies: &Currencies) {
        let l = p.preferred_locale.as_bytes();
        let locale_ok = l.len() == 5
            && l[..2].iter().all(u8::is_ascii_lowercase)
            && l[2] == b'-'
            && l[3..].iter().all(u8::is_ascii_uppercase);
        if !locale_ok {
            self.add(
                "preferredLocale",
                codes::INVALID_FORMAT,
                "preferredLocale must look like en-AU",
            );
        }
        if !currencies.contains(&p.preferred_currency) {
            self.add(
                "preferredCurrency",
                codes::INVALID_VALUE,
                format!("preferredCurrency must be one of {}", currencies.listed()),
            );
        }
    }
}

fn is_email(email: &str) -> bool {
    let Some((local, domain)) = email.split_once('@') else {
        return false;
    };
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    };
    email.len() <= 254
        && !local.is_empty()
        && local.len() <= 64
        && !local.starts_with('.')
        && !local.ends_with('.')
        && !local.contains("..")
        && local
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+/=?^_`{|}~.-".contains(&b))
        && domain.contains('.')
        && domain.split('.').all(label_ok)
}

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |r: std::ops::Range<usize>| s.get(r).and_then(|p| p.parse::<u32>().ok());
    let (Some(y), Some(m), Some(d)) = (num(0..4), num(5..7), num(8..10)) else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// Today's date in UTC, YYYY-MM-DD.
pub fn today() -> String {
    let now = prost_types::Timestamp::from(std::time::SystemTime::now()).to_string();
    now.get(..10).unwrap_or("9999-12-31").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A region is ISO 3166-2 of the address's own country, upper-cased.
    #[test]
    fn regions() {
        let mut v = Violations::default();
        assert_eq!(v.region(" us-ca ", "US"), "US-CA");
        assert_eq!(v.region("", "US"), "");
        assert!(v.0.is_empty());
        for bad in ["CA", "AU-CA", "US-", "US-CALI", "US-C A"] {
            let mut v = Violations::default();
            v.region(bad, "US");
            assert_eq!(v.0.len(), 1, "{bad}");
        }
    }

    #[test]
    fn emails() {
        for ok in ["a@b.co", "first.last+tag@shop.example.com", "x_y@d-1.io"] {
            assert!(is_email(ok), "{ok}");
        }
        for bad in [
            "",
            "a",
            "a@b",
            "@b.co",
            "a@.co",
            "a@b..co",
            "a b@c.co",
            "a@-b.co",
            ".a@b.co",
            "a..b@c.co",
        ] {
            assert!(!is_email(bad), "{bad}");
        }
    }

    #[test]
    fn dates() {
        assert!(
            is_date("2000-02-29")
                && !is_date("1900-02-29")
                && !is_date("2024-13-01")
                && !is_date("2024-1-01")
        );
        let mut v = Violations::default();
        v.date_of_birth("2999-01-01", "2026-11-22");
        v.date_of_birth("1990-06-31", "2026-11-22");
        v.phone("+61 4 1234 5678");
        v.phone("call me");
        let codes: Vec<String> =
            v.0.iter()
                .map(|x| format!("{}:{}", x.field, x.code))
                .collect();
        assert_eq!(
            codes,
            [
                "dateOfBirth:OUT_OF_RANGE",
                "dateOfBirth:INVALID_FORMAT",
                "phone:INVALID_FORMAT"
            ]
        );
    }

    /// Found by the contract run: "Ava\n" passed as "Ava" while the
    /// document (no control characters) calls it invalid. Spaces around a
    /// name are still trimmed.
    #[test]
    fn control_characters_are_refused_even_at_the_ends() {
        let mut v = Violations::default();
        assert_eq!(v.text("firstName", "  Ava  ", 100), "Ava");
        assert!(v.0.is_empty());
        v.text("firstName", "Ava\n", 100);
        v.optional_text("state", "\tNSW", 100);
        v.text("lastName", "\n", 100);
        let codes: Vec<String> =
            v.0.iter()
                .map(|x| format!("{}:{}", x.field, x.code))
                .collect();
        assert_eq!(
            codes,
            [
                "firstName:INVALID_FORMAT",
                "state:INVALID_FORMAT",
                "lastName:REQUIRED"
            ]
        );
    }

    /// Issue 25: a right-to-left override spoofed order screens, and a
    /// lone zero-width space counted as a name.
    #[test]
    fn names_that_reorder_or_show_nothing_are_refused() {
        let mut v = Violations::default();
        assert_eq!(v.text("firstName", "محمد", 100), "محمد");
        v.text("firstName", "\u{202E}avA", 100);
        v.text("lastName", "\u{200B}", 100);
        v.optional_text("state", "N\u{2066}SW", 100);
        assert_eq!(v.optional_text("streetNumber", "", 20), "");
        let codes: Vec<String> =
            v.0.iter()
                .map(|x| format!("{}:{}", x.field, x.code))
                .collect();
        assert_eq!(
            codes,
            [
                "firstName:INVALID_FORMAT",
                "lastName:REQUIRED",
                "state:INVALID_FORMAT"
            ]
        );
    }

    #[test]
    fn every_bad_address_field_is_listed() {
        let mut v = Violations::default();
        v.address(&AddressInput {
            country: "Australia".into(),
            ..Default::default()
        });
        let fields: Vec<&str> = v.0.iter().map(|x| x.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "firstName",
                "lastName",
                "streetName",
                "city",
                "postalCode",
                "country"
            ]
        );
    }
}

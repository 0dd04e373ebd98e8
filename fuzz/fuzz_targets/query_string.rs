#![no_main]
//! Query strings through the gateway's parsers: sort, filter, paging,
//! search text and locale, and the raw-request checks.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|raw: &str| storefront_gateway::fuzzing::query_string(raw));

#![no_main]
//! Text as an X-BFF-Token, verified as the gateway verifies one.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|token: &str| storefront_gateway::fuzzing::customer_token(token));

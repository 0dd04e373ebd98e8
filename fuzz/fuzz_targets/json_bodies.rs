#![no_main]
//! Bytes as every JSON request body the gateway reads.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| storefront_gateway::fuzzing::json_bodies(bytes));

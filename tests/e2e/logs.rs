//! Every mesh in this test binary logs into one buffer (or to stdout with
//! `TEST_LOG=1`), so a test can prove what never reaches the logs.

use std::io::Write;
use std::sync::{Mutex, Once};

use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::prelude::*;

static LOGS: Mutex<Vec<u8>> = Mutex::new(Vec::new());
static INSTALL: Once = Once::new();

struct Capture;

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        LOGS.lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Capture {
    type Writer = Capture;
    fn make_writer(&'a self) -> Capture {
        Capture
    }
}

pub fn install() {
    INSTALL.call_once(|| {
        if std::env::var("TEST_LOG").is_ok() {
            storefront_platform::telemetry::init_tracing();
            return;
        }
        // Debug for our own crates: more than production logs, so a leak
        // would show here first.
        let filter = tracing_subscriber::EnvFilter::new("info,storefront=debug,storefront_gateway=debug,storefront_customers=debug,storefront_platform=debug,storefront_domain=debug,h2=warn,hyper=warn");
        let _ = tracing_subscriber::registry().with(storefront_platform::telemetry::json_logs(Capture).with_filter(filter)).try_init();
    });
}

/// Everything logged so far.
pub fn captured() -> String {
    String::from_utf8_lossy(&LOGS.lock().unwrap_or_else(|p| p.into_inner())).into_owned()
}

use std::sync::atomic::{AtomicUsize, Ordering};

use prost_types::Timestamp;

use super::*;
use crate::store::tests::backends;

/// An update's result, seconds and version; it must have been written.
fn written(
    updated: Result<Updated<&'static str, Timestamp>, StoreError>,
) -> (&'static str, i64, u64) {
    match updated {
        Ok(Updated::Done {
            result,
            value,
            version,
        }) => (result, value.seconds, version),
        other => panic!("not written: {other:?}"),
    }
}

/// A value the caller already changed (`update_message_changed`) is
/// written as it is when nothing wrote the key since: the change does not
/// run again. When something did, the change runs on the newer value and
/// its own result is answered.
#[tokio::test]
async fn a_changed_value_is_written_as_it_is_unless_the_key_moved_on() {
    for (store, _server) in backends().await {
        let b = store.backend();
        store
            .insert_message("c", &Timestamp::default(), None)
            .await
            .unwrap();
        let ran = AtomicUsize::new(0);
        let add_five = |t: &mut Timestamp| {
            ran.fetch_add(1, Ordering::SeqCst);
            t.seconds += 5;
            Ok::<_, StoreError>("ran")
        };
        let changed_from_first = || {
            let value = Timestamp {
                seconds: 5,
                nanos: 0,
            };
            (Versioned { version: 1, value }, "given")
        };
        let first = store.update_message_changed("c", changed_from_first(), 4, None, add_five);
        assert_eq!(written(first.await), ("given", 5, 2), "{b}");
        assert_eq!(ran.load(Ordering::SeqCst), 0, "{b}: the change ran again");
        // The same change from version 1 again: the key is at 2 now.
        let again = store.update_message_changed("c", changed_from_first(), 4, None, add_five);
        assert_eq!(written(again.await), ("ran", 10, 3), "{b}");
        assert_eq!(ran.load(Ordering::SeqCst), 1, "{b}");
        let stored = store.get_message::<Timestamp>("c").await.unwrap().unwrap();
        assert_eq!((stored.value.seconds, stored.version), (10, 3), "{b}");
    }
}

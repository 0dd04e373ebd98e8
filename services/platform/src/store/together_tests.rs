//! Operations sent together do what the same operations one at a time do,
//! on every backend (memory, one redis-server, a Redis Cluster).

use prost::Message;

use super::super::tests::backends;

/// A value the store keeps as a message (a `Versioned` of it).
#[derive(Clone, PartialEq, Message)]
struct Note {
    #[prost(string, tag = "1")]
    text: String,
}

#[tokio::test]
async fn entries_added_together_keep_their_order_and_ids() {
    for (store, _server) in backends().await {
        let b = store.backend();
        store.stream_add("log", &[("n", b"0")], 1000).await.unwrap();
        let entries: Vec<Vec<(&str, &[u8])>> = vec![
            vec![("n", b"1"), ("type", b"order.created")],
            vec![("n", b"2"), ("type", b"payment.authorized")],
        ];
        let ids = store.stream_add_all("log", &entries, 1000).await.unwrap();
        let all = store.stream_after("log", "", 10).await.unwrap();
        let numbers: Vec<&[u8]> = all.iter().filter_map(|e| e.field("n")).collect();
        assert_eq!(numbers, [b"0", b"1", b"2"], "{b}");
        let stored: Vec<&str> = all[1..].iter().map(|e| e.id.as_str()).collect();
        assert_eq!(stored, ids, "{b}: the ids answered are the entries'");
        assert_eq!(
            all[2].field("type"),
            Some(&b"payment.authorized"[..]),
            "{b}"
        );
    }
}

#[tokio::test]
async fn a_member_removed_then_the_value_read_as_it_is_after() {
    for (store, _server) in backends().await {
        let b = store.backend();
        store.set_add("pending", "o1").await.unwrap();
        store.set_add("pending", "o2").await.unwrap();
        let note = Note {
            text: "left".into(),
        };
        store.insert_message("o1", &note, None).await.unwrap();
        store
            .replace("o1", 1, &Note { text: "now".into() }.encode_to_vec(), None)
            .await
            .unwrap();
        let read = store.set_remove_then_get_message::<Note>("pending", "o1", "o1");
        let read = read.await.unwrap().expect("the value");
        assert_eq!((read.version, read.value.text.as_str()), (2, "now"), "{b}");
        assert_eq!(
            store.set_sample("pending", 10).await.unwrap(),
            ["o2"],
            "{b}"
        );
        let gone = store.set_remove_then_get_message::<Note>("pending", "o2", "missing");
        assert!(gone.await.unwrap().is_none(), "{b}");
        assert!(
            store.set_sample("pending", 10).await.unwrap().is_empty(),
            "{b}"
        );
    }
}

/// A value created with its stream entries and sorted set members, all in
/// one write; a second create writes none of them; a cluster says it
/// cannot (its keys lie in different slots).
#[tokio::test]
async fn a_value_is_created_with_what_it_publishes_or_not_at_all() {
    for (store, _server) in backends().await {
        let b = store.backend();
        let entries: Vec<Vec<(&str, &[u8])>> = vec![vec![("n", b"1")], vec![("n", b"2")]];
        let raised = [("by-customer", "o1", 5), ("updated", "c1/o1", 7)];
        let published = super::Published {
            stream: "events",
            entries: &entries,
            max_len: 1000,
            raised: &raised,
        };
        let created = store.insert_published("o1", b"order", &published).await;
        if b == "redis cluster" {
            assert_eq!(created.unwrap(), None, "{b}");
            continue;
        }
        assert_eq!(created.unwrap(), Some(true), "{b}");
        let again = store.insert_published("o1", b"other", &published).await;
        assert_eq!(again.unwrap(), Some(false), "{b}");
        let got = store.get("o1").await.unwrap().unwrap();
        assert_eq!(
            (got.version, got.value.as_slice()),
            (1, &b"order"[..]),
            "{b}"
        );
        let all = store.stream_after("events", "", 10).await.unwrap();
        let numbers: Vec<&[u8]> = all.iter().filter_map(|e| e.field("n")).collect();
        assert_eq!(numbers, [b"1", b"2"], "{b}: once, in order");
        let page = store
            .zset_page("updated", (i64::MIN, ""), 10)
            .await
            .unwrap();
        assert_eq!(page, [("c1/o1".to_string(), 7)], "{b}");
        let page = store
            .zset_page("by-customer", (i64::MIN, ""), 10)
            .await
            .unwrap();
        assert_eq!(page, [("o1".to_string(), 5)], "{b}");
    }
}

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

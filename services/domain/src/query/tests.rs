use proptest::prelude::*;
use storefront_proto::common::v1::{FilterValue, PageRequest, SortField};

use super::*;

#[derive(Debug, Clone)]
struct Rec {
    id: String,
    rank: i64,
    tags: Vec<std::sync::Arc<str>>,
}

#[derive(Clone, Copy)]
enum F {
    Rank,
    Tags,
}

struct RecSchema;

impl Schema for RecSchema {
    type Record = Rec;
    type Field = F;
    type Context = ();
    fn resolve(name: &str) -> Option<(F, FieldType)> {
        match name {
            "rank" => Some((F::Rank, FieldType::Integer)),
            "tags" => Some((F::Tags, FieldType::TextSet)),
            _ => None,
        }
    }
    fn id(r: &Rec) -> &str {
        &r.id
    }
    fn value<'a>(r: &'a Rec, field: F, _: &()) -> Value<'a> {
        match field {
            F::Rank => Value::Integer(r.rank),
            F::Tags => Value::TextSet(&r.tags),
        }
    }
}

fn recs(ranks: &[i64]) -> Vec<Rec> {
    ranks
        .iter()
        .enumerate()
        .map(|(i, r)| Rec {
            id: format!("id-{i:04}"),
            rank: *r,
            tags: vec![format!("t{}", r % 3).into()],
        })
        .collect()
}

fn query(limit: u32, offset: u64, desc: bool, filters: Vec<Filter>) -> ListQuery {
    let direction = if desc {
        SortDirection::Desc
    } else {
        SortDirection::Asc
    };
    ListQuery {
        page: Some(PageRequest { limit, offset }),
        sort: vec![SortField {
            field: "rank".into(),
            direction: direction as i32,
        }],
        filters,
    }
}

fn filter(field: &str, op: FilterOperator, kind: Kind) -> Filter {
    Filter {
        field: field.into(),
        operator: op as i32,
        value: Some(FilterValue { kind: Some(kind) }),
    }
}

#[test]
fn filters_combine_and_operators_compare() {
    let items = recs(&[5, 1, 9, 3, 7]);
    let q = query(
        10,
        0,
        false,
        vec![
            filter("rank", FilterOperator::Gte, Kind::Integer(3)),
            filter("rank", FilterOperator::Lt, Kind::Integer(9)),
        ],
    );
    let page = run::<RecSchema>(&items, &q, &(), &[]).unwrap();
    let ranks: Vec<i64> = page.items.iter().map(|r| r.rank).collect();
    assert_eq!(ranks, vec![3, 5, 7]);
    assert_eq!(page.info.total, 3);
    let q = query(
        10,
        0,
        false,
        vec![filter("tags", FilterOperator::Eq, Kind::Text("t1".into()))],
    );
    let ranks: Vec<i64> = run::<RecSchema>(&items, &q, &(), &[])
        .unwrap()
        .items
        .iter()
        .map(|r| r.rank)
        .collect();
    assert_eq!(ranks, vec![1, 7]);
}

#[test]
fn bad_filters_and_sorts_are_rejected_with_their_codes() {
    let items = recs(&[1]);
    let cases = [
        (
            filter("nope", FilterOperator::Eq, Kind::Integer(1)),
            "UNSUPPORTED",
        ),
        (
            filter("rank", FilterOperator::Eq, Kind::Text("x".into())),
            "INVALID_VALUE",
        ),
        (
            filter("tags", FilterOperator::Gt, Kind::Text("x".into())),
            "UNSUPPORTED",
        ),
    ];
    for (f, code) in cases {
        let err = run::<RecSchema>(&items, &query(10, 0, false, vec![f]), &(), &[])
            .err()
            .unwrap();
        assert_eq!(err.code, "INVALID_FILTER");
        assert_eq!(err.violations[0].code, code);
    }
    let mut q = query(10, 0, false, vec![]);
    q.sort[0].field = "colour".into();
    let err = run::<RecSchema>(&items, &q, &(), &[]).err().unwrap();
    assert_eq!(err.code, "INVALID_SORT_FIELD");
    assert_eq!(err.violations[0].field, "sort");
    let err = run::<RecSchema>(&items, &query(101, 0, false, vec![]), &(), &[])
        .err()
        .unwrap();
    assert_eq!(err.violations[0].code, "OUT_OF_RANGE");
}

#[test]
fn offset_past_the_end_is_an_empty_page_with_the_total() {
    let items = recs(&[1, 2, 3]);
    let page = run::<RecSchema>(&items, &query(2, 10, false, vec![]), &(), &[]).unwrap();
    assert!(page.items.is_empty());
    assert_eq!((page.info.count, page.info.total), (0, 3));
}

proptest! {
    /// Walking every page yields each record exactly once, in an order that
    /// is total (sort key, then id), whatever the page size and duplicates.
    #[test]
    fn paging_walks_a_total_order_without_gaps(
        ranks in proptest::collection::vec(0i64..6, 0..80),
        limit in 1u32..15,
        desc in any::<bool>(),
    ) {
        let items = recs(&ranks);
        let mut walked: Vec<&Rec> = Vec::new();
        let mut offset = 0u64;
        loop {
            let page = run::<RecSchema>(&items, &query(limit, offset, desc, vec![]), &(), &[]).unwrap();
            prop_assert_eq!(page.info.total as usize, items.len());
            prop_assert!(page.info.count <= limit);
            walked.extend(page.items.iter().copied());
            offset += u64::from(limit);
            if offset >= page.info.total { break; }
        }
        prop_assert_eq!(walked.len(), items.len());
        let mut ids: Vec<&str> = walked.iter().map(|r| r.id.as_str()).collect();
        for pair in walked.windows(2) {
            let key = |r: &Rec| if desc { -r.rank } else { r.rank };
            prop_assert!((key(pair[0]), &pair[0].id) < (key(pair[1]), &pair[1].id));
        }
        ids.sort_unstable();
        ids.dedup();
        prop_assert_eq!(ids.len(), items.len());
    }
}

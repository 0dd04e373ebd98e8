//! Issue 50, item 2: an old and a new build of a service interoperate
//! during a roll. Every program speaks protobuf to the others and keeps
//! protobuf records in Redis, so what makes them interoperate is that the
//! wire only grows: every service, method, message field and enum value of
//! the previous release (chart 0.1.0's image: `previous-protos.desc`, its
//! `proto/` compiled with the same protoc) is still here with the same
//! number, type and cardinality. A new field is then absent to an old
//! reader (ignored) and an old message to a new one (its default); a new
//! RPC answers UNIMPLEMENTED from an old pod, which callers that use one
//! during a roll take as "not yet" (the search reindex does). docs/deploy.md,
//! "Upgrading", has the roll order this rests on.

use std::collections::BTreeMap;

use prost::Message;
use prost_types::{DescriptorProto, FileDescriptorSet};

const PREVIOUS: &[u8] = include_bytes!("previous-protos.desc");

/// A method: its name, input and output types, and whether each streams.
type Method = (String, String, String, bool, bool);

/// Every message of `set` by full name (nested ones too).
fn messages(set: &FileDescriptorSet) -> BTreeMap<String, &DescriptorProto> {
    fn walk<'a>(
        prefix: &str,
        m: &'a DescriptorProto,
        out: &mut BTreeMap<String, &'a DescriptorProto>,
    ) {
        let name = format!("{prefix}.{}", m.name());
        for nested in &m.nested_type {
            walk(&name, nested, out);
        }
        out.insert(name, m);
    }
    let mut out = BTreeMap::new();
    for file in &set.file {
        for m in &file.message_type {
            walk(&format!(".{}", file.package()), m, &mut out);
        }
    }
    out
}

fn decoded(bytes: &[u8]) -> FileDescriptorSet {
    FileDescriptorSet::decode(bytes).expect("a descriptor set")
}

#[test]
fn the_wire_only_grows_from_the_previous_release() {
    let (old, new) = (
        decoded(PREVIOUS),
        decoded(storefront_proto::FILE_DESCRIPTOR_SET),
    );
    let mut broken = Vec::new();
    let (old_messages, new_messages) = (messages(&old), messages(&new));
    for (name, was) in &old_messages {
        let Some(now) = new_messages.get(name) else {
            broken.push(format!("{name} is gone"));
            continue;
        };
        for field in &was.field {
            let same = now.field.iter().find(|f| f.number() == field.number());
            match same {
                None => broken.push(format!(
                    "{name}.{} ({}) is gone",
                    field.name(),
                    field.number()
                )),
                Some(f)
                    if (f.r#type(), f.type_name(), f.label())
                        != (field.r#type(), field.type_name(), field.label()) =>
                {
                    broken.push(format!(
                        "{name}.{} ({}) changed type or cardinality",
                        field.name(),
                        field.number()
                    ))
                }
                Some(f) if f.name() != field.name() => broken.push(format!(
                    "{name}: field {} renamed {} -> {}",
                    field.number(),
                    field.name(),
                    f.name()
                )),
                Some(_) => {}
            }
        }
    }
    let services = |set: &FileDescriptorSet| -> BTreeMap<String, Vec<Method>> {
        let mut out = BTreeMap::new();
        for file in &set.file {
            for s in &file.service {
                let methods = s
                    .method
                    .iter()
                    .map(|m| {
                        let (input, output) =
                            (m.input_type().to_owned(), m.output_type().to_owned());
                        (
                            m.name().to_owned(),
                            input,
                            output,
                            m.client_streaming(),
                            m.server_streaming(),
                        )
                    })
                    .collect();
                out.insert(format!("{}.{}", file.package(), s.name()), methods);
            }
        }
        out
    };
    let (old_services, new_services) = (services(&old), services(&new));
    for (name, methods) in &old_services {
        let now = new_services.get(name).cloned().unwrap_or_default();
        for m in methods {
            if !now.contains(m) {
                broken.push(format!("{name}/{} is gone or changed its messages", m.0));
            }
        }
    }
    let enums = |set: &FileDescriptorSet| -> BTreeMap<String, Vec<(String, i32)>> {
        let mut out = BTreeMap::new();
        for file in &set.file {
            for e in &file.enum_type {
                let values = e
                    .value
                    .iter()
                    .map(|v| (v.name().to_owned(), v.number()))
                    .collect();
                out.insert(format!("{}.{}", file.package(), e.name()), values);
            }
        }
        out
    };
    let new_enums = enums(&new);
    for (name, values) in enums(&old) {
        let now = new_enums.get(&name).cloned().unwrap_or_default();
        for v in values {
            if !now.contains(&v) {
                broken.push(format!("{name}.{} ({}) is gone or renumbered", v.0, v.1));
            }
        }
    }
    assert!(broken.is_empty(), "a roll would break: {broken:#?}");
    // The fixture is the previous release's, not empty or this one's.
    assert!(old_messages.len() > 100, "{}", old_messages.len());
    assert!(old_services.contains_key("storefront.catalog.v1.CatalogService"));
    let catalog = &old_services["storefront.catalog.v1.CatalogService"];
    assert!(
        !catalog.iter().any(|m| m.0 == "RequestReindex"),
        "the fixture predates RequestReindex"
    );
}

//! gRPC server reflection: outside production every service lists its
//! services to a caller without proto files (`grpcurl list`), with no
//! identity token, as health checks are; `GRPC_REFLECTION=false` turns it
//! off. (In production it is off unless turned on, and then needs a
//! token: `settings` tests.)

use tonic_reflection::pb::v1::ServerReflectionRequest;
use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;

use crate::helpers::{Backend, TestMesh, spawn_mesh_on};

/// The services `addr` lists through reflection, or the refusal.
async fn listed(t: &TestMesh) -> Result<Vec<String>, tonic::Status> {
    let url = format!("http://{}", t.mesh.catalog_addr);
    let channel = tonic::transport::Endpoint::from_shared(url)
        .expect("an endpoint")
        .connect()
        .await
        .expect("connect");
    let mut client = ServerReflectionClient::new(channel);
    let ask = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut answers = client
        .server_reflection_info(tokio_stream::iter([ask]))
        .await?
        .into_inner();
    let answer = answers.message().await?.expect("an answer");
    match answer.message_response {
        Some(MessageResponse::ListServicesResponse(list)) => {
            Ok(list.service.into_iter().map(|s| s.name).collect())
        }
        other => panic!("a list of services, not {other:?}"),
    }
}

#[tokio::test]
async fn services_list_themselves_without_proto_files() {
    let t = spawn_mesh_on(Backend::Memory, &[]).await;
    let services = listed(&t)
        .await
        .expect("reflection answers without a token");
    assert!(
        services
            .iter()
            .any(|s| s == "storefront.catalog.v1.CatalogService"),
        "{services:?}"
    );
    let off = spawn_mesh_on(Backend::Memory, &[("GRPC_REFLECTION", "false")]).await;
    // Off: its path is no longer open, so a call without a token is
    // refused before anything (with one, it is an unknown method).
    let refused = listed(&off).await.expect_err("off");
    assert_eq!(refused.code(), tonic::Code::Unauthenticated, "{refused:?}");
}

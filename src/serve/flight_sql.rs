//! `xprof-sql serve`: Arrow Flight SQL over [`Sessions`], with
//! arrow-flight's server (the protocol is theirs).
//!
//! - Statements and prepared statements (placeholders `$1`, `$2`, … bound
//!   by `DoPut`) stream their answers batch by batch: a batch is made when
//!   the client asks for the next, so a client that stops reading holds
//!   one batch, and one that goes away cancels the query.
//! - Catalog calls (`GetCatalogs`, `GetDbSchemas`, `GetTables` with each
//!   column's documentation, `GetTableTypes`, `GetSqlInfo`) list the
//!   session's tables and views.
//! - Every statement is read-only, under the server's time limit; writes
//!   (`ExecuteUpdate`, ingestion, a DDL or DML statement) are refused with
//!   `PERMISSION_DENIED`, a time limit with `DEADLINE_EXCEEDED`, the
//!   memory limit with `RESOURCE_EXHAUSTED`.
//! - A call names its session with the [`SESSION_HEADER`] header (none:
//!   the served one); the actions [`OPEN_SESSION`], [`CLOSE_SESSION`] and
//!   [`LIST_SESSIONS`] manage named sessions.

use std::collections::{HashMap, VecDeque};
use std::pin::Pin;
use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::ipc::writer::IpcWriteOptions;
use arrow_flight::decode::FlightRecordBatchStream;
use arrow_flight::encode::FlightDataEncoderBuilder;
use arrow_flight::error::FlightError;
use arrow_flight::flight_service_server::{FlightService, FlightServiceServer};
use arrow_flight::sql::metadata::{SqlInfoData, SqlInfoDataBuilder};
use arrow_flight::sql::server::{FlightSqlService, PeekableFlightDataStream};
use arrow_flight::sql::{
    ActionClosePreparedStatementRequest, ActionCreatePreparedStatementRequest,
    ActionCreatePreparedStatementResult, Any, CommandGetCatalogs, CommandGetDbSchemas,
    CommandGetSqlInfo, CommandGetTableTypes, CommandGetTables, CommandPreparedStatementQuery,
    CommandPreparedStatementUpdate, CommandStatementIngest, CommandStatementQuery,
    CommandStatementUpdate, DoPutPreparedStatementResult, ProstMessageExt, SqlInfo,
    TicketStatementQuery,
};
use arrow_flight::{
    Action, ActionType, FlightDescriptor, FlightEndpoint, FlightInfo, HandshakeRequest,
    HandshakeResponse, IpcMessage, SchemaAsIpc, Ticket,
};
use datafusion::error::DataFusionError;
use datafusion::execution::SendableRecordBatchStream;
use datafusion::scalar::ScalarValue;
use futures_util::{Stream, StreamExt as _, TryStreamExt as _};
use prost::Message as _;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status, Streaming};

use crate::query::{ProfileSession, QueryError};
use crate::serve::ServeError;
use crate::serve::auth::{ServeToken, check_call};
use crate::serve::catalog;
use crate::serve::sessions::Sessions;

/// The call header naming the session a call runs in (none: the one the
/// server was started with). ADBC sets it with the connection option
/// `adbc.flight.sql.rpc.call_header.x-xprof-session`.
pub const SESSION_HEADER: &str = "x-xprof-session";

/// The action opening a named session: its body is JSON `{"name": …,
/// "paths": [ … ]}`, its answer JSON `{"name": …, "inputs": [ … ]}`.
pub const OPEN_SESSION: &str = "open_session";
/// The action closing a named session: body `{"name": …}`.
pub const CLOSE_SESSION: &str = "close_session";
/// The action listing the named sessions: answer JSON `[{"name": …,
/// "inputs": [ … ]}, …]`.
pub const LIST_SESSIONS: &str = "list_sessions";

/// Prepared statements the server keeps at once; the oldest is forgotten
/// past it (a client that never closes its statements does not grow the
/// server: with [`MAX_BOUND_BYTES`] and the 1 MiB statement size, at most
/// 256 × 1.06 MiB are held).
pub const MAX_PREPARED: usize = 256;

/// The largest row of parameters one prepared statement binds (Arrow
/// memory of the batch it came in).
pub const MAX_BOUND_BYTES: usize = 64 << 10;

/// The largest gRPC message taken or sent (a bound parameter batch, an
/// answer's batch).
const GRPC_MESSAGE_BYTES: usize = 64 << 20;

/// Where the server listens and who may call it.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The address to listen on (port 0: any free port).
    pub bind: std::net::SocketAddr,
    /// The token every call must carry; required off loopback
    /// ([`crate::serve::auth::require_token_off_loopback`]).
    pub token: Option<ServeToken>,
}

/// A running server: its address, and a stop.
#[derive(Debug)]
pub struct RunningServer {
    addr: std::net::SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    served: tokio::task::JoinHandle<Result<(), tonic::transport::Error>>,
}

impl RunningServer {
    /// The address it listens on.
    pub fn addr(&self) -> std::net::SocketAddr {
        self.addr
    }

    /// Runs until the server fails or [`RunningServer::stop`] is sent.
    pub async fn wait(self) -> Result<(), String> {
        let RunningServer { served, stop, .. } = self;
        let answer = served.await;
        drop(stop);
        match answer {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(format!("the Flight SQL server stopped: {e}")),
            Err(e) => Err(format!("the Flight SQL server stopped: {e}")),
        }
    }

    /// Stops listening; calls in flight end.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = self.served.await;
    }
}

/// Starts serving `sessions` as `options` say (refusing a bind off
/// loopback without a token).
pub async fn start(
    sessions: Arc<Sessions>,
    options: ServeOptions,
) -> Result<RunningServer, String> {
    crate::serve::auth::require_token_off_loopback(options.bind, options.token.as_ref())?;
    let listener = tokio::net::TcpListener::bind(options.bind)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", options.bind))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("cannot listen on {}: {e}", options.bind))?;
    let service = FlightServiceServer::new(FlightSqlServer::new(sessions))
        .max_decoding_message_size(GRPC_MESSAGE_BYTES)
        .max_encoding_message_size(GRPC_MESSAGE_BYTES);
    let token = options.token;
    let checked = InterceptedService::new(service, move |request: Request<()>| {
        check_call(token.as_ref(), &request)?;
        Ok(request)
    });
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
    let served = tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(checked)
            .serve_with_incoming_shutdown(incoming, async {
                let _ = stopped.await;
            }),
    );
    Ok(RunningServer {
        addr,
        stop: Some(stop),
        served,
    })
}

/// A prepared statement: its SQL, session and bound parameters.
#[derive(Debug, Clone)]
struct Prepared {
    session: Option<String>,
    sql: String,
    params: Option<Vec<ScalarValue>>,
}

/// The prepared statements kept, oldest first.
#[derive(Debug, Default)]
struct PreparedStatements {
    by_handle: HashMap<String, Prepared>,
    order: VecDeque<String>,
    made: u64,
}

/// The Flight SQL service ([`start`] serves it).
pub struct FlightSqlServer {
    sessions: Arc<Sessions>,
    prepared: std::sync::Mutex<PreparedStatements>,
    sql_info: SqlInfoData,
    /// A value no other server process shares, in every handle, so a
    /// handle of an earlier server is not taken for one of this.
    instance: u64,
}

impl FlightSqlServer {
    /// The service over `sessions`.
    pub fn new(sessions: Arc<Sessions>) -> Self {
        let mut info = SqlInfoDataBuilder::new();
        info.append(SqlInfo::FlightSqlServerName, "xprof-sql");
        info.append(SqlInfo::FlightSqlServerVersion, env!("CARGO_PKG_VERSION"));
        info.append(SqlInfo::FlightSqlServerArrowVersion, "59");
        info.append(SqlInfo::FlightSqlServerReadOnly, true);
        info.append(SqlInfo::FlightSqlServerSql, true);
        info.append(SqlInfo::FlightSqlServerSubstrait, false);
        info.append(SqlInfo::FlightSqlServerTransaction, 0i32);
        info.append(SqlInfo::FlightSqlServerCancel, false);
        info.append(SqlInfo::SqlIdentifierQuoteChar, "\"");
        let instance = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
            ^ u64::from(std::process::id()).rotate_left(32);
        Self {
            sessions,
            prepared: std::sync::Mutex::default(),
            sql_info: info
                .build()
                .expect("the server's SqlInfo values are well formed"),
            instance,
        }
    }

    async fn session_of<T>(&self, request: &Request<T>) -> Result<Arc<ProfileSession>, Status> {
        let name = session_name(request)?;
        self.sessions
            .get(name.as_deref())
            .await
            .map_err(serve_status)
    }

    fn keep(&self, prepared: Prepared) -> String {
        let mut kept = self.prepared.lock().unwrap_or_else(|e| e.into_inner());
        kept.made += 1;
        let handle = format!("{:016x}-{}", self.instance, kept.made);
        if kept.order.len() >= MAX_PREPARED
            && let Some(oldest) = kept.order.pop_front()
        {
            kept.by_handle.remove(&oldest);
        }
        kept.order.push_back(handle.clone());
        kept.by_handle.insert(handle.clone(), prepared);
        handle
    }

    fn prepared(&self, handle: &[u8]) -> Result<(String, Prepared), Status> {
        let handle = String::from_utf8_lossy(handle).into_owned();
        let kept = self.prepared.lock().unwrap_or_else(|e| e.into_inner());
        match kept.by_handle.get(&handle) {
            Some(p) => Ok((handle, p.clone())),
            None => Err(Status::not_found(format!(
                "no prepared statement {handle:?} here: it was closed, or forgotten as one of \
                 more than {MAX_PREPARED} kept, or made by another server; prepare it again"
            ))),
        }
    }

    fn set_params(&self, handle: &str, params: Vec<ScalarValue>) -> Result<(), Status> {
        let mut kept = self.prepared.lock().unwrap_or_else(|e| e.into_inner());
        match kept.by_handle.get_mut(handle) {
            Some(p) => {
                p.params = Some(params);
                Ok(())
            }
            None => Err(Status::not_found(format!(
                "prepared statement {handle:?} was closed while its parameters were bound"
            ))),
        }
    }
}

/// The answer stream of the Flight service.
type DoGetStream = <FlightSqlServer as FlightService>::DoGetStream;

#[tonic::async_trait]
impl FlightSqlService for FlightSqlServer {
    type FlightService = FlightSqlServer;

    async fn do_handshake(
        &self,
        request: Request<Streaming<HandshakeRequest>>,
    ) -> Result<
        Response<Pin<Box<dyn Stream<Item = Result<HandshakeResponse, Status>> + Send>>>,
        Status,
    > {
        // The interceptor checked the credentials; the answer hands back
        // the header later calls carry.
        let authorization = request
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(crate::serve::auth::basic_password)
            .and_then(|password| String::from_utf8(password).ok());
        let answer = HandshakeResponse {
            protocol_version: 0,
            payload: Default::default(),
        };
        let mut response: Response<
            Pin<Box<dyn Stream<Item = Result<HandshakeResponse, Status>> + Send>>,
        > = Response::new(Box::pin(futures_util::stream::iter([Ok(answer)])));
        if let Some(token) = authorization {
            let bearer = format!("Bearer {token}")
                .parse()
                .map_err(|_| Status::invalid_argument("the token cannot be sent back"))?;
            response.metadata_mut().insert("authorization", bearer);
        }
        Ok(response)
    }

    async fn get_flight_info_statement(
        &self,
        query: CommandStatementQuery,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let name = session_name(&request)?;
        let session = self.session_of(&request).await?;
        let schema = planned_schema(&session, &query.query, None).await?;
        let handle = statement_handle(name.as_deref().unwrap_or(""), &query.query);
        let ticket = TicketStatementQuery {
            statement_handle: handle.into(),
        };
        flight_info(&schema, ticket.as_any(), request.into_inner())
    }

    async fn get_flight_info_prepared_statement(
        &self,
        command: CommandPreparedStatementQuery,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let (_, prepared) = self.prepared(&command.prepared_statement_handle)?;
        let session = self
            .sessions
            .get(prepared.session.as_deref())
            .await
            .map_err(serve_status)?;
        let schema = planned_schema(&session, &prepared.sql, prepared.params.clone()).await?;
        flight_info(&schema, command.as_any(), request.into_inner())
    }

    async fn get_flight_info_catalogs(
        &self,
        query: CommandGetCatalogs,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let schema = query.into_builder().schema();
        flight_info(&schema, query.as_any(), request.into_inner())
    }

    async fn get_flight_info_schemas(
        &self,
        query: CommandGetDbSchemas,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let schema = query.clone().into_builder().schema();
        flight_info(&schema, query.as_any(), request.into_inner())
    }

    async fn get_flight_info_tables(
        &self,
        query: CommandGetTables,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let schema = query.clone().into_builder().schema();
        flight_info(&schema, query.as_any(), request.into_inner())
    }

    async fn get_flight_info_table_types(
        &self,
        query: CommandGetTableTypes,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let schema = query.into_builder().schema();
        flight_info(&schema, query.as_any(), request.into_inner())
    }

    async fn get_flight_info_sql_info(
        &self,
        query: CommandGetSqlInfo,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let schema = query.clone().into_builder(&self.sql_info).schema();
        flight_info(&schema, query.as_any(), request.into_inner())
    }

    async fn do_get_statement(
        &self,
        ticket: TicketStatementQuery,
        _request: Request<Ticket>,
    ) -> Result<Response<DoGetStream>, Status> {
        let (name, sql) = parse_statement_handle(&ticket.statement_handle)?;
        let session = self
            .sessions
            .get(Some(name.as_str()))
            .await
            .map_err(serve_status)?;
        let stream = session.execute(&sql).await.map_err(query_status)?;
        Ok(answer(stream))
    }

    async fn do_get_prepared_statement(
        &self,
        command: CommandPreparedStatementQuery,
        _request: Request<Ticket>,
    ) -> Result<Response<DoGetStream>, Status> {
        let (_, prepared) = self.prepared(&command.prepared_statement_handle)?;
        let session = self
            .sessions
            .get(prepared.session.as_deref())
            .await
            .map_err(serve_status)?;
        let stream = session
            .execute_with_params(&prepared.sql, prepared.params)
            .await
            .map_err(query_status)?;
        Ok(answer(stream))
    }

    async fn do_get_catalogs(
        &self,
        query: CommandGetCatalogs,
        request: Request<Ticket>,
    ) -> Result<Response<DoGetStream>, Status> {
        let entries = self.entries(&request).await?;
        let mut builder = query.into_builder();
        let mut seen = std::collections::BTreeSet::new();
        for e in &entries {
            if seen.insert(e.catalog.clone()) {
                builder.append(e.catalog.clone());
            }
        }
        Ok(one_batch(builder.schema(), builder.build()))
    }

    async fn do_get_schemas(
        &self,
        query: CommandGetDbSchemas,
        request: Request<Ticket>,
    ) -> Result<Response<DoGetStream>, Status> {
        let entries = self.entries(&request).await?;
        let mut builder = query.into_builder();
        let mut seen = std::collections::BTreeSet::new();
        for e in &entries {
            if seen.insert((e.catalog.clone(), e.schema.clone())) {
                builder.append(&e.catalog, &e.schema);
            }
        }
        Ok(one_batch(builder.schema(), builder.build()))
    }

    async fn do_get_tables(
        &self,
        query: CommandGetTables,
        request: Request<Ticket>,
    ) -> Result<Response<DoGetStream>, Status> {
        let entries = self.entries(&request).await?;
        let mut builder = query.into_builder();
        for e in &entries {
            // The types answers arrive with (dictionaries as their values).
            let sent = catalog::hydrated(&e.arrow_schema);
            builder
                .append(&e.catalog, &e.schema, &e.name, e.table_type, &sent)
                .map_err(|e| Status::internal(e.to_string()))?;
        }
        Ok(one_batch(builder.schema(), builder.build()))
    }

    async fn do_get_table_types(
        &self,
        query: CommandGetTableTypes,
        _request: Request<Ticket>,
    ) -> Result<Response<DoGetStream>, Status> {
        let mut builder = query.into_builder();
        builder.append("TABLE");
        builder.append("VIEW");
        Ok(one_batch(builder.schema(), builder.build()))
    }

    async fn do_get_sql_info(
        &self,
        query: CommandGetSqlInfo,
        _request: Request<Ticket>,
    ) -> Result<Response<DoGetStream>, Status> {
        let builder = query.into_builder(&self.sql_info);
        Ok(one_batch(builder.schema(), builder.build()))
    }

    async fn do_put_statement_update(
        &self,
        _command: CommandStatementUpdate,
        _request: Request<PeekableFlightDataStream>,
    ) -> Result<i64, Status> {
        Err(read_only_refusal("updates"))
    }

    async fn do_put_statement_ingest(
        &self,
        _command: CommandStatementIngest,
        _request: Request<PeekableFlightDataStream>,
    ) -> Result<i64, Status> {
        Err(read_only_refusal("ingestion"))
    }

    async fn do_put_prepared_statement_update(
        &self,
        _command: CommandPreparedStatementUpdate,
        _request: Request<PeekableFlightDataStream>,
    ) -> Result<i64, Status> {
        Err(read_only_refusal("updates"))
    }

    async fn do_put_prepared_statement_query(
        &self,
        command: CommandPreparedStatementQuery,
        request: Request<PeekableFlightDataStream>,
    ) -> Result<DoPutPreparedStatementResult, Status> {
        let (handle, _) = self.prepared(&command.prepared_statement_handle)?;
        let mut batches = FlightRecordBatchStream::new_from_flight_data(
            request.into_inner().map_err(FlightError::from),
        );
        let mut params: Option<Vec<ScalarValue>> = None;
        while let Some(batch) = batches.try_next().await.map_err(Status::from)? {
            if batch.get_array_memory_size() > MAX_BOUND_BYTES {
                return Err(Status::invalid_argument(format!(
                    "the bound parameters take {} bytes; at most {MAX_BOUND_BYTES} are taken",
                    batch.get_array_memory_size()
                )));
            }
            for row in 0..batch.num_rows() {
                if params.is_some() {
                    return Err(Status::invalid_argument(
                        "bind one row of parameters to a query: run it again for the next row",
                    ));
                }
                let values = batch
                    .columns()
                    .iter()
                    .map(|column| ScalarValue::try_from_array(column, row))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| Status::invalid_argument(e.to_string()))?;
                params = Some(values);
            }
        }
        self.set_params(&handle, params.unwrap_or_default())?;
        Ok(DoPutPreparedStatementResult {
            prepared_statement_handle: Some(handle.into_bytes().into()),
        })
    }

    async fn do_action_create_prepared_statement(
        &self,
        query: ActionCreatePreparedStatementRequest,
        request: Request<Action>,
    ) -> Result<ActionCreatePreparedStatementResult, Status> {
        let name = session_name(&request)?;
        let session = self.session_of(&request).await?;
        let frame = session.sql(&query.query).await.map_err(query_status)?;
        let parameter_schema = parameter_schema(frame.logical_plan())?;
        let dataset_schema = planned_schema(&session, &query.query, None).await?;
        let handle = self.keep(Prepared {
            session: name,
            sql: query.query,
            params: None,
        });
        Ok(ActionCreatePreparedStatementResult {
            prepared_statement_handle: handle.into_bytes().into(),
            dataset_schema: schema_bytes(&dataset_schema)?,
            parameter_schema: schema_bytes(&parameter_schema)?,
        })
    }

    async fn do_action_close_prepared_statement(
        &self,
        query: ActionClosePreparedStatementRequest,
        _request: Request<Action>,
    ) -> Result<(), Status> {
        let handle = String::from_utf8_lossy(&query.prepared_statement_handle).into_owned();
        let mut kept = self.prepared.lock().unwrap_or_else(|e| e.into_inner());
        kept.by_handle.remove(&handle);
        kept.order.retain(|h| *h != handle);
        Ok(())
    }

    async fn do_action_fallback(
        &self,
        request: Request<Action>,
    ) -> Result<Response<<Self as FlightService>::DoActionStream>, Status> {
        let action = request.into_inner();
        let body: serde_json::Value = if action.body.is_empty() {
            serde_json::Value::Null
        } else {
            serde_json::from_slice(&action.body).map_err(|e| {
                Status::invalid_argument(format!("{}: the body is not JSON: {e}", action.r#type))
            })?
        };
        let answer = match action.r#type.as_str() {
            OPEN_SESSION => {
                let name = json_str(&body, "name")?;
                let paths: Vec<std::path::PathBuf> = body
                    .get("paths")
                    .and_then(|p| p.as_array())
                    .ok_or_else(|| Status::invalid_argument("open_session: give \"paths\": [ … ]"))?
                    .iter()
                    .map(|p| p.as_str().map(std::path::PathBuf::from))
                    .collect::<Option<_>>()
                    .ok_or_else(|| Status::invalid_argument("open_session: paths are strings"))?;
                let opened = self
                    .sessions
                    .open(&name, &paths)
                    .await
                    .map_err(serve_status)?;
                serde_json::json!({"name": name, "inputs": opened.inputs})
            }
            CLOSE_SESSION => {
                let name = json_str(&body, "name")?;
                self.sessions.close(&name).await.map_err(serve_status)?;
                serde_json::json!({"closed": name})
            }
            LIST_SESSIONS => serde_json::Value::Array(
                self.sessions
                    .list()
                    .await
                    .into_iter()
                    .map(|(name, inputs)| serde_json::json!({"name": name, "inputs": inputs}))
                    .collect(),
            ),
            other => {
                return Err(Status::invalid_argument(format!(
                    "no action {other:?}; this server's own: {OPEN_SESSION}, {CLOSE_SESSION}, \
                     {LIST_SESSIONS}"
                )));
            }
        };
        let result = arrow_flight::Result {
            body: answer.to_string().into_bytes().into(),
        };
        Ok(Response::new(Box::pin(futures_util::stream::iter([Ok(
            result,
        )]))))
    }

    async fn list_custom_actions(&self) -> Option<Vec<Result<ActionType, Status>>> {
        Some(vec![
            Ok(ActionType {
                r#type: OPEN_SESSION.into(),
                description: "open paths the server may read as a named session: \
                              {\"name\": …, \"paths\": [ … ]}"
                    .into(),
            }),
            Ok(ActionType {
                r#type: CLOSE_SESSION.into(),
                description: "close a named session: {\"name\": …}".into(),
            }),
            Ok(ActionType {
                r#type: LIST_SESSIONS.into(),
                description: "the named sessions and their inputs".into(),
            }),
        ])
    }

    async fn register_sql_info(&self, _id: i32, _result: &SqlInfo) {}
}

impl FlightSqlServer {
    async fn entries<T>(&self, request: &Request<T>) -> Result<Vec<catalog::CatalogEntry>, Status> {
        let session = self.session_of(request).await?;
        catalog::entries(session.context())
            .await
            .map_err(|e| datafusion_status(&e))
    }
}

/// The session a call names ([`SESSION_HEADER`]).
fn session_name<T>(request: &Request<T>) -> Result<Option<String>, Status> {
    match request.metadata().get(SESSION_HEADER) {
        None => Ok(None),
        Some(value) => value
            .to_str()
            .map(|s| Some(s.trim().to_string()).filter(|s| !s.is_empty()))
            .map_err(|_| Status::invalid_argument(format!("{SESSION_HEADER}: not text"))),
    }
}

/// A statement ticket's handle: the session name, a newline, the SQL
/// (names hold no newline).
fn statement_handle(session: &str, sql: &str) -> Vec<u8> {
    format!("{session}\n{sql}").into_bytes()
}

fn parse_statement_handle(handle: &[u8]) -> Result<(String, String), Status> {
    let text = std::str::from_utf8(handle)
        .map_err(|_| Status::invalid_argument("the statement ticket is not text"))?;
    let (name, sql) = text.split_once('\n').ok_or_else(|| {
        Status::invalid_argument("the statement ticket is not one of this server's")
    })?;
    Ok((name.to_string(), sql.to_string()))
}

/// The schema `sql`'s answer arrives with in `session` (with `params`
/// bound): its physical plan's, which may differ from the logical one in
/// nullability and dictionaries, with dictionaries sent as their values,
/// as [`answer`] sends them. A statement whose placeholders are not bound
/// yet has only its logical schema.
async fn planned_schema(
    session: &ProfileSession,
    sql: &str,
    params: Option<Vec<ScalarValue>>,
) -> Result<Schema, Status> {
    let mut frame = session.sql(sql).await.map_err(query_status)?;
    if let Some(values) = params {
        frame = crate::query::bind_params(frame, values).map_err(query_status)?;
    }
    let logical = frame.schema().as_arrow().clone();
    match frame.create_physical_plan().await {
        Ok(plan) => Ok(catalog::hydrated(&plan.schema())),
        Err(_) => Ok(catalog::hydrated(&logical)),
    }
}

/// The placeholders of a plan (`$1`, `$2`, …) as a schema, in order, each
/// with its inferred type (`Null` where none is).
fn parameter_schema(plan: &datafusion::logical_expr::LogicalPlan) -> Result<Schema, Status> {
    let types = plan
        .get_parameter_types()
        .map_err(|e| datafusion_status(&e))?;
    let mut named: Vec<(usize, String, DataType)> = types
        .into_iter()
        .map(|(name, ty)| {
            let index = name
                .trim_start_matches('$')
                .parse::<usize>()
                .unwrap_or(usize::MAX);
            (index, name, ty.unwrap_or(DataType::Null))
        })
        .collect();
    named.sort();
    Ok(Schema::new(
        named
            .into_iter()
            .map(|(_, name, ty)| Field::new(name, ty, true))
            .collect::<Vec<_>>(),
    ))
}

fn schema_bytes(schema: &Schema) -> Result<bytes::Bytes, Status> {
    let message: IpcMessage = SchemaAsIpc::new(schema, &IpcWriteOptions::default())
        .try_into()
        .map_err(|e: arrow::error::ArrowError| Status::internal(e.to_string()))?;
    Ok(message.0)
}

/// A FlightInfo of one endpoint whose ticket is `command`.
fn flight_info(
    schema: &Schema,
    command: Any,
    descriptor: FlightDescriptor,
) -> Result<Response<FlightInfo>, Status> {
    let endpoint = FlightEndpoint::new().with_ticket(Ticket::new(command.encode_to_vec()));
    let info = FlightInfo::new()
        .try_with_schema(schema)
        .map_err(|e| Status::internal(e.to_string()))?
        .with_endpoint(endpoint)
        .with_descriptor(descriptor);
    Ok(Response::new(info))
}

/// A query's answer as Flight data, made batch by batch as it is read.
fn answer(stream: SendableRecordBatchStream) -> Response<DoGetStream> {
    let schema = stream.schema();
    let batches = stream.map_err(|e| FlightError::Tonic(Box::new(datafusion_status(&e))));
    let data = FlightDataEncoderBuilder::new()
        .with_schema(schema)
        .build(batches)
        .map_err(Status::from);
    Response::new(Box::pin(data))
}

/// One batch of a catalog answer as Flight data.
fn one_batch(
    schema: SchemaRef,
    batch: Result<arrow::record_batch::RecordBatch, FlightError>,
) -> Response<DoGetStream> {
    let data = FlightDataEncoderBuilder::new()
        .with_schema(schema)
        .build(futures_util::stream::once(async move { batch }))
        .map_err(Status::from);
    Response::new(Box::pin(data.boxed()))
}

fn json_str(body: &serde_json::Value, key: &str) -> Result<String, Status> {
    body.get(key)
        .and_then(|v| v.as_str())
        .map(str::to_string)
        .ok_or_else(|| Status::invalid_argument(format!("give \"{key}\": \"…\" in the body")))
}

fn read_only_refusal(what: &str) -> Status {
    Status::permission_denied(format!(
        "this server is read-only: {what} are refused (queries, EXPLAIN, SHOW and DESCRIBE run)"
    ))
}

/// A server error as the status a client sees.
pub fn serve_status(error: ServeError) -> Status {
    match error {
        ServeError::Confined { .. } => Status::permission_denied(error.to_string()),
        ServeError::Path { .. } | ServeError::NoSession { .. } => {
            Status::not_found(error.to_string())
        }
        ServeError::Exists(_) => Status::already_exists(error.to_string()),
        ServeError::Limit(m) => Status::resource_exhausted(m),
        ServeError::BadRequest(m) => Status::invalid_argument(m),
        ServeError::Query(e) => query_status(e),
    }
}

/// A query error as the status a client sees: a refused write
/// `PERMISSION_DENIED`, the time limit `DEADLINE_EXCEEDED`, the memory
/// limit `RESOURCE_EXHAUSTED`, bad SQL `INVALID_ARGUMENT`.
pub fn query_status(error: QueryError) -> Status {
    match error {
        QueryError::ReadOnly(m) => Status::permission_denied(m),
        QueryError::TooLarge(m) | QueryError::Settings(m) | QueryError::Inputs(m) => {
            Status::invalid_argument(m)
        }
        QueryError::DataFusion(e) => datafusion_status(&e),
        QueryError::Output { .. } => Status::internal(error.to_string()),
        other => {
            // Opening inputs (a named session) under the time limit.
            let message = other.to_string();
            if message.contains("time limit") {
                Status::deadline_exceeded(message)
            } else {
                Status::invalid_argument(message)
            }
        }
    }
}

fn datafusion_status(error: &DataFusionError) -> Status {
    let message = error.to_string();
    match error.find_root() {
        DataFusionError::ResourcesExhausted(what) if what.contains("time limit") => {
            Status::deadline_exceeded(message)
        }
        DataFusionError::ResourcesExhausted(_) => Status::resource_exhausted(message),
        DataFusionError::NotImplemented(_) => Status::unimplemented(message),
        DataFusionError::IoError(_)
        | DataFusionError::ObjectStore(_)
        | DataFusionError::Internal(_)
        | DataFusionError::ParquetError(_) => Status::internal(message),
        _ => Status::invalid_argument(message),
    }
}

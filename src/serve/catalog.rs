//! A session's tables and views as a catalog lists them: each with its
//! kind and its Arrow schema, every column carrying its documentation
//! (the text `xprof-sql schema` prints) under Flight SQL's column
//! metadata keys. Helper views (`_` names) stay unlisted, as in `schema`.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::datasource::TableType;
use datafusion::prelude::SessionContext;

use crate::format::Table;
use crate::query::views;

/// Flight SQL's column metadata key for a column's description (the
/// JDBC `REMARKS`), which ADBC's `get_objects` reports as
/// `xdbc_remarks`.
pub const REMARKS_KEY: &str = "ARROW:FLIGHT:SQL:REMARKS";

/// One table or view of a session.
#[derive(Debug, Clone)]
pub struct CatalogEntry {
    /// The catalog (`datafusion`).
    pub catalog: String,
    /// The schema (`xprof`, `information_schema`, …).
    pub schema: String,
    /// The table or view name.
    pub name: String,
    /// `TABLE` or `VIEW`.
    pub table_type: &'static str,
    /// Its columns, each with its documentation ([`documented`]).
    pub arrow_schema: SchemaRef,
}

/// Every table and view of `ctx`, by catalog, schema and name.
pub async fn entries(ctx: &SessionContext) -> datafusion::error::Result<Vec<CatalogEntry>> {
    let mut out = Vec::new();
    let mut catalogs = ctx.catalog_names();
    catalogs.sort();
    for catalog_name in catalogs {
        let Some(catalog) = ctx.catalog(&catalog_name) else {
            continue;
        };
        let mut schemas = catalog.schema_names();
        schemas.sort();
        for schema_name in schemas {
            let Some(schema) = catalog.schema(&schema_name) else {
                continue;
            };
            let mut names = schema.table_names();
            names.sort();
            for name in names {
                if name.starts_with('_') {
                    continue;
                }
                let Some(provider) = schema.table(&name).await? else {
                    continue;
                };
                let is_view = provider.table_type() == TableType::View
                    || (schema_name != "information_schema" && views::find(&name).is_some());
                out.push(CatalogEntry {
                    catalog: catalog_name.clone(),
                    schema: schema_name.clone(),
                    arrow_schema: Arc::new(documented(
                        &catalog_name,
                        &schema_name,
                        &name,
                        &provider.schema(),
                    )),
                    name,
                    table_type: if is_view { "VIEW" } else { "TABLE" },
                });
            }
        }
    }
    Ok(out)
}

/// `schema` with each column's metadata as Flight SQL names it: its
/// catalog, schema, table, SQL type name and, where this project
/// documents the column, [`REMARKS_KEY`].
pub fn documented(catalog: &str, schema: &str, table: &str, arrow_schema: &Schema) -> Schema {
    let fields: Vec<Field> = arrow_schema
        .fields()
        .iter()
        .map(|field| {
            let mut metadata: HashMap<String, String> = field.metadata().clone();
            metadata.insert("ARROW:FLIGHT:SQL:CATALOG_NAME".into(), catalog.into());
            metadata.insert("ARROW:FLIGHT:SQL:DB_SCHEMA_NAME".into(), schema.into());
            metadata.insert("ARROW:FLIGHT:SQL:TABLE_NAME".into(), table.into());
            metadata.insert(
                "ARROW:FLIGHT:SQL:TYPE_NAME".into(),
                field.data_type().to_string(),
            );
            metadata.insert("ARROW:FLIGHT:SQL:IS_READ_ONLY".into(), "1".into());
            if let Some(doc) = column_doc(table, field.name()) {
                metadata.insert(REMARKS_KEY.into(), doc);
            }
            field.as_ref().clone().with_metadata(metadata)
        })
        .collect();
    Schema::new_with_metadata(fields, arrow_schema.metadata().clone())
}

/// What a column of a table or view of this project holds, as
/// `xprof-sql schema` prints it.
pub fn column_doc(table: &str, column: &str) -> Option<String> {
    if let Some(t) = Table::from_name(table) {
        return t
            .def()
            .columns
            .iter()
            .find(|c| c.name == column)
            .map(|c| c.doc.to_string());
    }
    views::find(table)?
        .columns()
        .into_iter()
        .find(|(name, _)| *name == column)
        .map(|(_, meaning)| meaning)
}

/// `schema` with every dictionary column as its values' type: what
/// arrow-flight's encoder sends by default (`DictionaryHandling::Hydrate`),
/// which every client reads, and what Flight SQL's catalog reports.
pub fn hydrated(schema: &Schema) -> Schema {
    Schema::new_with_metadata(
        schema
            .fields()
            .iter()
            .map(|f| hydrated_field(f))
            .collect::<Vec<_>>(),
        schema.metadata().clone(),
    )
}

fn hydrated_field(field: &Field) -> Field {
    field
        .clone()
        .with_data_type(hydrated_type(field.data_type()))
}

fn hydrated_type(data_type: &DataType) -> DataType {
    match data_type {
        DataType::Dictionary(_, values) => hydrated_type(values),
        DataType::List(item) => DataType::List(Arc::new(hydrated_field(item))),
        DataType::LargeList(item) => DataType::LargeList(Arc::new(hydrated_field(item))),
        DataType::Struct(fields) => {
            DataType::Struct(fields.iter().map(|f| hydrated_field(f)).collect())
        }
        DataType::Map(entries, sorted) => DataType::Map(Arc::new(hydrated_field(entries)), *sorted),
        other => other.clone(),
    }
}

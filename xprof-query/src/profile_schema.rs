//! The schema provider profiles are registered in ([`ProfileSchema`]):
//! tables as any schema holds them, and views kept as their SQL until a
//! statement first names one, then planned once and kept. Opening a
//! session plans none of the forty views; a query pays only for the
//! views it reads (`SELECT 1` pays for none).
//!
//! A view's plan is bound to the tables registered when it was planned,
//! so registering or removing a table forgets every plan: the next
//! statement naming a view plans it again over the new tables.

use std::collections::HashMap;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use async_trait::async_trait;
use datafusion::catalog::{SchemaProvider, TableProvider};
use datafusion::datasource::{TableType, ViewTable};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::context::SessionState;

use crate::plan::plan_in_schema;

/// Gives the current state of the context a schema belongs to (`None`
/// once the context is gone); a view is planned with it.
pub(crate) type StateSource = Arc<dyn Fn() -> Option<SessionState> + Send + Sync>;

/// A view as registered: its SQL, and its plan once a statement named it.
struct LazyView {
    sql: &'static str,
    planned: Option<Arc<dyn TableProvider>>,
}

/// Views and the registration count their plans were made at.
#[derive(Default)]
struct Views {
    by_name: HashMap<String, LazyView>,
    /// Bumped by every change of the schema's tables: a plan started
    /// before a change is not kept.
    generation: u64,
}

impl Views {
    fn forget_plans(&mut self) {
        self.generation += 1;
        for v in self.by_name.values_mut() {
            v.planned = None;
        }
    }
}

/// A schema holding a profile's tables, and its views planned when a
/// statement first names them (module docs).
pub struct ProfileSchema {
    /// The schema's name: views are planned with it as the default schema.
    name: String,
    tables: RwLock<HashMap<String, Arc<dyn TableProvider>>>,
    views: RwLock<Views>,
    state: RwLock<Option<StateSource>>,
}

impl std::fmt::Debug for ProfileSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // One lock at a time (`register_table` takes the views' first).
        let tables: Vec<String> = read(&self.tables).keys().cloned().collect();
        let views: Vec<String> = read(&self.views).by_name.keys().cloned().collect();
        f.debug_struct("ProfileSchema")
            .field("name", &self.name)
            .field("tables", &tables)
            .field("views", &views)
            .finish()
    }
}

/// A lock's guard, whatever a panicking holder left: every write here
/// leaves the maps whole.
fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|e| e.into_inner())
}

fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|e| e.into_inner())
}

impl ProfileSchema {
    /// An empty schema named `name`.
    pub(crate) fn new(name: &str) -> Self {
        Self {
            name: name.to_string(),
            tables: RwLock::default(),
            views: RwLock::default(),
            state: RwLock::default(),
        }
    }

    /// Where views are planned from: the context holding this schema.
    pub(crate) fn set_state_source(&self, source: StateSource) {
        *write(&self.state) = Some(source);
    }

    /// Defines view `name` as `sql`, replacing a table or view of that
    /// name; planned when a statement first names it.
    pub(crate) fn define_view(&self, name: &str, sql: &'static str) {
        write(&self.tables).remove(name);
        let mut views = write(&self.views);
        views.forget_plans();
        views
            .by_name
            .insert(name.to_string(), LazyView { sql, planned: None });
    }

    /// Whether view `name` has been planned (by a statement naming it, or
    /// a view or diff reading it) since the tables were last registered.
    pub fn is_view_planned(&self, name: &str) -> bool {
        read(&self.views)
            .by_name
            .get(name)
            .is_some_and(|v| v.planned.is_some())
    }

    async fn plan_view(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        let (sql, generation) = {
            let views = read(&self.views);
            match views.by_name.get(name) {
                None => return Ok(None),
                Some(LazyView {
                    planned: Some(p), ..
                }) => return Ok(Some(Arc::clone(p))),
                Some(v) => (v.sql, views.generation),
            }
        };
        let source = read(&self.state).clone().ok_or_else(|| {
            DataFusionError::Internal(format!(
                "view {name}: schema {} is not registered on a context",
                self.name
            ))
        })?;
        let state = source().ok_or_else(|| {
            DataFusionError::Internal(format!(
                "view {name}: the context of schema {} is gone",
                self.name
            ))
        })?;
        let plan = plan_in_schema(&state, &self.name, sql)
            .await
            .map_err(|e| e.context(format!("planning view {name}")))?;
        let planned: Arc<dyn TableProvider> = Arc::new(ViewTable::new(plan, Some(sql.to_string())));
        let mut views = write(&self.views);
        if views.generation == generation
            && let Some(v) = views.by_name.get_mut(name)
        {
            // Planned twice at once: the first kept wins, both are equal.
            return Ok(Some(Arc::clone(v.planned.get_or_insert(planned))));
        }
        Ok(Some(planned))
    }
}

#[async_trait]
impl SchemaProvider for ProfileSchema {
    fn table_names(&self) -> Vec<String> {
        let mut names: Vec<String> = read(&self.tables).keys().cloned().collect();
        names.extend(read(&self.views).by_name.keys().cloned());
        names
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        if let Some(t) = read(&self.tables).get(name) {
            return Ok(Some(Arc::clone(t)));
        }
        self.plan_view(name).await
    }

    async fn table_type(&self, name: &str) -> Result<Option<TableType>> {
        // Listing the schema (information_schema.tables) plans nothing.
        if let Some(t) = read(&self.tables).get(name) {
            return Ok(Some(t.table_type()));
        }
        Ok(read(&self.views)
            .by_name
            .contains_key(name)
            .then_some(TableType::View))
    }

    fn register_table(
        &self,
        name: String,
        table: Arc<dyn TableProvider>,
    ) -> Result<Option<Arc<dyn TableProvider>>> {
        let mut views = write(&self.views);
        views.forget_plans();
        let view = views.by_name.remove(&name);
        let old = write(&self.tables).insert(name, table);
        Ok(old.or_else(|| view.map(placeholder)))
    }

    fn deregister_table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        let mut views = write(&self.views);
        views.forget_plans();
        if let Some(t) = write(&self.tables).remove(name) {
            return Ok(Some(t));
        }
        Ok(views.by_name.remove(name).map(placeholder))
    }

    fn table_exist(&self, name: &str) -> bool {
        // One lock at a time (`register_table` takes the views' first).
        let is_table = read(&self.tables).contains_key(name);
        is_table || read(&self.views).by_name.contains_key(name)
    }
}

/// What a removed view is returned as: its plan when it had one, else a
/// table of no columns and no rows (a caller only learns that it existed;
/// planning it now could fail on the tables being replaced).
fn placeholder(view: LazyView) -> Arc<dyn TableProvider> {
    view.planned.unwrap_or_else(|| {
        Arc::new(datafusion::datasource::empty::EmptyTable::new(Arc::new(
            arrow::datatypes::Schema::empty(),
        )))
    })
}

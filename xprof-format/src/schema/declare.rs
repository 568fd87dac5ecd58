//! How a table is declared: [`table!`] gives a table's [`TableDef`] and its
//! typed row struct from one list of columns, [`table_columns!`] the
//! [`TableDef`] alone (for `events` and `event_args`, whose rows have
//! builders of their own in [`crate::event_rows`]).
//!
//! Each column is `field: RustType = (SPEC)`, its doc comment being the
//! column's meaning as `docs/schema.md` prints it. SPEC is the column type
//! (`(Utf8)`), the same with `null` when it may be NULL (`(Utf8 null)`),
//! a column shared by many tables (`(= TRACE_ID)`), or `(values)`: the six
//! typed value columns of a stat (`value_type` … `bytes_value`), filled by
//! one [`StatValue`](crate::StatValue) field. A test checks that each
//! field's Rust type fits its column (an `Option` exactly where the column
//! is nullable).

use super::ColumnType::*;
use super::{ColumnDef, ColumnType};

/// A column.
pub(super) const fn col(
    name: &'static str,
    ty: ColumnType,
    nullable: bool,
    doc: &'static str,
) -> ColumnDef {
    ColumnDef {
        name,
        ty,
        nullable,
        doc,
    }
}

/// A column's name from its field's: `r#type` is `type`.
pub(super) const fn field_name(field: &'static str) -> &'static str {
    match field.as_bytes() {
        [b'r', b'#', rest @ ..] => match ::core::str::from_utf8(rest) {
            Ok(name) => name,
            Err(_) => panic!("a field name is UTF-8"),
        },
        _ => field,
    }
}

/// A doc comment's lines joined (each starts with a space), its first
/// space dropped.
pub(super) const fn doc_text(joined: &'static str) -> &'static str {
    joined.trim_ascii_start()
}

/// The columns of each spec, one after another.
pub(super) const fn flatten<const N: usize>(parts: &[&[ColumnDef]]) -> [ColumnDef; N] {
    let mut out = [TRACE_ID; N];
    let mut at = 0;
    let mut p = 0;
    while p < parts.len() {
        let mut i = 0;
        while i < parts[p].len() {
            out[at] = parts[p][i];
            at += 1;
            i += 1;
        }
        p += 1;
    }
    assert!(at == N, "the column count adds up");
    out
}

/// `trace_id`, first in every table.
pub(super) const TRACE_ID: ColumnDef = col(
    "trace_id",
    Int32,
    false,
    "Id of the converted input (one file or one host of a run); unique in a dataset.",
);

/// `device_id` of a table of one plane's rows.
pub(super) const DEVICE_ID: ColumnDef = col(
    "device_id",
    Int32,
    false,
    "Device (plane) the row belongs to; joins `devices`.",
);

/// `metadata_id` of the `llo_*` tables decoded from `llo_proto`: where the payload was.
pub(super) const LLO_METADATA_ID: ColumnDef = col(
    "metadata_id",
    Int64,
    false,
    "Event metadata of `/host:metadata` whose `llo_proto` stat holds the program; joins `llo_programs`, `event_metadata` and `metadata_args`.",
);

/// `hlo_op` of the `llo_*` tables decoded from `llo_proto`: the program's HLO op.
pub(super) const LLO_HLO_OP: ColumnDef = col(
    "hlo_op",
    Utf8,
    false,
    "The program's HLO op (`llo_proto` field 1, `hlo_instruction_name`): the `display_name` of its `XLA Ops` events.",
);

/// `hlo_op` of the `llo_dump_*` tables.
pub(super) const DUMP_HLO_OP: ColumnDef = col(
    "hlo_op",
    Utf8,
    false,
    "The HLO op the dump is of, from its file name `<ns>-<HLO op>-<pass>-<dump>.txt`; joins `llo_programs.hlo_op` and `llo_region_entries.hlo_op`.",
);

/// The typed value columns of every `*_args` table: exactly one of them
/// is set, as `value_type` names.
pub(super) const VALUE_COLUMNS: [ColumnDef; 6] = [
    col(
        "value_type",
        DictUtf8,
        false,
        "Which value the stat had on the wire: `int`, `uint`, `double`, `str`, `bytes`, `ref` (a `ref_value`, resolved to its string in `str_value`), `compressed_str` (inflated into `str_value`), or `none`.",
    ),
    col("int_value", Int64, true, "`int64_value`."),
    col(
        "uint_value",
        UInt64,
        true,
        "`uint64_value`, or the raw id of a `ref_value`.",
    ),
    col("double_value", Float64, true, "`double_value`."),
    col(
        "str_value",
        Utf8,
        true,
        "`str_value`, the resolved string of a `ref_value`, or the inflated `compressed_str_value`.",
    ),
    col("bytes_value", Binary, true, "`bytes_value`, kept as is."),
];

/// The columns of one spec (see the module's doc).
macro_rules! columns_of {
    ($field:expr, [$($doc:literal)*], (values)) => {
        $crate::schema::declare::VALUE_COLUMNS
    };
    ($field:expr, [$($doc:literal)*], (= $shared:ident)) => {
        [$crate::schema::ColumnDef {
            name: $crate::schema::declare::field_name($field),
            ..$crate::schema::declare::$shared
        }]
    };
    ($field:expr, [$($doc:literal)*], ($ty:ident)) => {
        [$crate::schema::declare::col(
            $crate::schema::declare::field_name($field),
            $crate::schema::ColumnType::$ty,
            false,
            $crate::schema::declare::doc_text(concat!($($doc),*)),
        )]
    };
    ($field:expr, [$($doc:literal)*], ($ty:ident null)) => {
        [$crate::schema::declare::col(
            $crate::schema::declare::field_name($field),
            $crate::schema::ColumnType::$ty,
            true,
            $crate::schema::declare::doc_text(concat!($($doc),*)),
        )]
    };
}

/// How many columns one spec is.
macro_rules! width_of {
    ((values)) => {
        6
    };
    ($spec:tt) => {
        1
    };
}

/// A table's [`TableDef`](super::TableDef) and its row struct (see the
/// module's doc).
macro_rules! table {
    (
        $(#[doc = $doc:literal])*
        $variant:ident: $static:ident = $name:literal, sorted by [$($sort:literal),* $(,)?],
        $row:ident $(<$lt:lifetime>)? {
            $($(#[doc = $field_doc:literal])* $field:ident : $ty:ty = $spec:tt),* $(,)?
        }
    ) => {
        table_columns! {
            $(#[doc = $doc])*
            $variant: $static = $name, sorted by [$($sort),*],
            { $($(#[doc = $field_doc])* $field = $spec),* }
        }

        $(#[doc = $doc])*
        ///
        /// A row of the table (the table's declaration, `table!`, gives the
        /// fields and the columns).
        #[derive(Debug, Clone, PartialEq)]
        #[allow(missing_docs)]
        pub struct $row $(<$lt>)? {
            $($(#[doc = $field_doc])* pub $field: $ty),*
        }

        impl $(<$lt>)? $crate::small_table_rows::Row for $row $(<$lt>)? {
            const TABLE: $crate::schema::Table = $crate::schema::Table::$variant;

            fn fields() -> Vec<$crate::small_table_rows::FieldShape> {
                vec![$($crate::small_table_rows::FieldShape {
                    name: $crate::schema::declare::field_name(stringify!($field)),
                    width: <$ty as $crate::small_table_rows::Cell>::WIDTH,
                    nullable: <$ty as $crate::small_table_rows::Cell>::NULLABLE,
                }),*]
            }

            fn append(
                &self,
                builder: &mut $crate::builders::TableBuilder,
                interner: &mut $crate::builders::Interner,
            ) {
                let mut column = 0usize;
                $(
                    $crate::small_table_rows::Cell::append(&self.$field, builder, column, interner);
                    column += <$ty as $crate::small_table_rows::Cell>::WIDTH;
                )*
                debug_assert_eq!(column, Self::TABLE.def().columns.len());
            }
        }
    };
}

/// A table's [`TableDef`](super::TableDef) alone (see the module's doc).
macro_rules! table_columns {
    (
        $(#[doc = $doc:literal])*
        $variant:ident: $static:ident = $name:literal, sorted by [$($sort:literal),* $(,)?],
        { $($(#[doc = $field_doc:literal])* $field:ident = $spec:tt),* $(,)? }
    ) => {
        #[doc = concat!("`", $name, "`.")]
        pub static $static: $crate::schema::TableDef = $crate::schema::TableDef {
            name: $name,
            doc: $crate::schema::declare::doc_text(concat!($($doc),*)),
            sort_by: &[$($sort),*],
            columns: &$crate::schema::declare::flatten::<{ 0 $(+ width_of!($spec))* }>(&[
                $(&columns_of!(stringify!($field), [$($field_doc)*], $spec)),*
            ]),
        };
    };
}

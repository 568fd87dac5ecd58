-- Per LLO compiler dump with a per-bundle utilization file, bundle and
-- unit: the slots the compiler counted (`llo_dump_bundle_units.used`) next
-- to the ops `llo_dump_ops` gives that unit, and whether they agree.
-- @column hlo_op: the HLO op the dump is of, from its file names.
-- @column address: the bundle's address in the dump.
-- @column unit: the unit, in the vocabulary of `llo_dump_bundle_units.unit` (`VLD`, `VST`, `MXU`,
--   `XLU`, `VALU`, `VPOP`, `EUP`, `SALU`, ...), or `OTHER` for ops no rule knows.
-- @column used: slots of the unit the compiler counted in the bundle (`llo_dump_bundle_units.used`;
--   for `MXU` the MXUs it models busy); NULL where the utilization file has no column for the unit.
-- @column ops: ops of the bundle that `llo_dump_ops` gives the unit, `PSEUDO` ops left out (a
--   count; 0 when none).
-- @column capacity: the unit's slots per bundle, from the utilization file's `CAPACITY` line; NULL
--   where the file has no column for the unit.
-- @column counts_ops: whether `used` counts ops: FALSE for `MXU` (MXUs modelled busy), TRUE
--   otherwise.
-- @column agrees: whether `ops = used` (FALSE where `used` is NULL); NULL for `MXU`.
-- @column bundles_trace_id: the trace of the dump's final-bundles file (`llo_dump_bundles`,
--   `llo_dump_ops`).
-- @column utilization_trace_id: the trace of the dump's per-bundle utilization file
--   (`llo_dump_bundle_units`).
--
-- The compiler's `…-final_hlo-static-per-bundle-utilization.txt` is the
-- oracle for the unit of an op: `llo_dump_ops.unit` is decided from the
-- op's mnemonic (docs/analyses.md says how), and this view checks it,
-- bundle by bundle. A dump is the files of one compile: the same HLO op
-- and the same file-name time stamp (`traces.start_unix_ns`); each file is
-- a trace of its own (`bundles_trace_id`, `utilization_trace_id`).
--
-- `used` is NULL where the utilization file has no column for a unit the
-- ops were given (`OTHER`: a mnemonic no rule knows), `ops` 0 where no op
-- of the bundle has the unit. `counts_ops` is FALSE for `MXU`: that
-- column is the MXUs the compiler models busy in the bundle (from the
-- bundle after an MXU's first `vmatmul` to a few after its last), not an
-- op count, so MXU ops (`vmatprep`, `vmatpush`, `vmatmul`) do not add up
-- to it and `agrees` is NULL there. Elsewhere `agrees` is `ops = used`.
-- `PSEUDO` ops take no slot and are left out.
WITH dumps AS (
  SELECT trace_id, start_unix_ns FROM traces WHERE source_format = 'llo_dump'
),
used AS (
  SELECT u.trace_id, d.start_unix_ns, u.hlo_op, u.address, u.unit, u.used, u.capacity
  FROM llo_dump_bundle_units u JOIN dumps d ON d.trace_id = u.trace_id
),
ops AS (
  SELECT o.trace_id, d.start_unix_ns, o.hlo_op, o.address, o.unit, count(*) AS ops
  FROM llo_dump_ops o JOIN dumps d ON d.trace_id = o.trace_id
  WHERE o.unit <> 'PSEUDO'
  GROUP BY o.trace_id, d.start_unix_ns, o.hlo_op, o.address, o.unit
),
bundle_files AS (
  SELECT DISTINCT b.trace_id, d.start_unix_ns, b.hlo_op
  FROM llo_dump_bundles b JOIN dumps d ON d.trace_id = b.trace_id
),
paired AS (
  SELECT u.trace_id AS utilization_trace_id, f.trace_id AS bundles_trace_id,
         u.start_unix_ns, u.hlo_op
  FROM (SELECT DISTINCT trace_id, start_unix_ns, hlo_op FROM used) u
  JOIN bundle_files f ON f.hlo_op = u.hlo_op
    AND (f.start_unix_ns IS NOT DISTINCT FROM u.start_unix_ns)
),
cells AS (
  SELECT p.utilization_trace_id, p.bundles_trace_id, p.hlo_op, u.address, u.unit, u.used,
         u.capacity
  FROM paired p JOIN used u ON u.trace_id = p.utilization_trace_id
  UNION ALL
  SELECT p.utilization_trace_id, p.bundles_trace_id, p.hlo_op, o.address, o.unit,
         CAST(NULL AS BIGINT), CAST(NULL AS BIGINT)
  FROM paired p JOIN ops o ON o.trace_id = p.bundles_trace_id
  WHERE NOT EXISTS (SELECT 1 FROM used u WHERE u.trace_id = p.utilization_trace_id
                    AND u.unit = o.unit)
)
SELECT c.hlo_op, c.address, c.unit, c.used, coalesce(o.ops, 0) AS ops, c.capacity,
       c.unit <> 'MXU' AS counts_ops,
       CASE WHEN c.unit <> 'MXU' THEN c.used IS NOT NULL AND c.used = coalesce(o.ops, 0) END
         AS agrees,
       c.bundles_trace_id, c.utilization_trace_id
FROM cells c
LEFT JOIN ops o ON o.trace_id = c.bundles_trace_id AND o.address = c.address
  AND o.unit = c.unit
